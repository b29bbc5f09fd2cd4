/**
 * The batch consumers' exactly-once effects, batch by batch: what a batch applies when it carries
 * an event twice or events applied before, and what a redelivered batch applies after the database
 * committed it but the offsets were never committed (a crash in between).
 */
import { CounterIncremented, TestDatabases, counterIncremented, testLogger } from '../../test/event-fixtures';
import type { Database } from '../database';
import type { ConsumedMessage, EventBus, SubscribeOptions } from './bus';
import { ProcessedEvent, consume, consumeBatch } from './consumer';
import { EventMetrics } from './metrics';

jest.setTimeout(60000);

const databases = new TestDatabases();
afterAll(() => databases.dropAll());

const TOPIC = 'counter-incremented';

/** A bus that hands the subscription's batch handler to the test, which plays the broker. */
function handOverBus(): { bus: EventBus; deliver: (messages: ConsumedMessage[]) => Promise<void>; options: () => SubscribeOptions | undefined } {
  let subscribed: SubscribeOptions | undefined;
  const bus: EventBus = {
    kind: 'memory',
    publish: async () => undefined,
    subscribe: async (options) => {
      subscribed = options;
      return { stop: async () => undefined };
    },
    health: async () => undefined,
    close: async () => undefined,
  };
  return { bus, deliver: (messages) => (subscribed?.handleBatch as (m: ConsumedMessage[]) => Promise<void>)(messages), options: () => subscribed };
}

let offset = 0;
const message = (event: CounterIncremented): ConsumedMessage => ({ topic: TOPIC, partition: 0, offset: String(offset++), key: event.counter, value: JSON.stringify(event) });

async function applied(db: Database, consumer: string): Promise<number> {
  return db.manager.count(ProcessedEvent, { where: { consumer } });
}

describe.each(['consumeBatch', 'consume'] as const)('%s', (kind) => {
  let db: Database;
  let deliver: (messages: ConsumedMessage[]) => Promise<void>;
  let seen: string[];
  let failures = 0;
  const groupId = `counting-${kind}`;

  beforeAll(async () => {
    db = await databases.open(`consumer_${kind}`);
    const handOver = handOverBus();
    deliver = handOver.deliver;
    const apply = async () => {
      if (failures > 0) {
        failures -= 1;
        throw new Error('the database went away');
      }
    };
    if (kind === 'consumeBatch') {
      await consumeBatch({
        bus: handOver.bus,
        db,
        logger: testLogger,
        groupId,
        topics: { [TOPIC]: CounterIncremented },
        applyBatch: async (events) => {
          await apply();
          seen.push(...events.map(({ event }) => event.eventId));
        },
      });
    } else {
      await consume({
        bus: handOver.bus,
        db,
        logger: testLogger,
        groupId,
        topic: TOPIC,
        schema: CounterIncremented,
        apply: async (event) => {
          await apply();
          seen.push(event.eventId);
        },
      });
    }
  });

  beforeEach(() => {
    seen = [];
  });

  it('applies an event that a batch carries twice once, and skips one applied in an earlier batch', async () => {
    const [a, b, c] = [0, 1, 2].map((seq) => counterIncremented('twice', seq));
    await deliver([message(a)]);
    seen = [];
    const before = await applied(db, groupId);

    await deliver([message(a), message(b), message(c), message(b), message(a)]);

    expect(seen).toEqual([b.eventId, c.eventId]);
    expect(await applied(db, groupId)).toBe(before + 2);
  });

  it('applies nothing again when a committed batch comes again, and only the new events of a batch that overlaps it', async () => {
    const events = [0, 1, 2, 3].map((seq) => counterIncremented('redelivered', seq));
    const batch = events.slice(0, 3).map(message);
    await deliver(batch);
    expect(seen).toEqual(events.slice(0, 3).map((e) => e.eventId));
    const before = await applied(db, groupId);

    // The process died after the transaction committed, before the offsets did: the same batch again.
    seen = [];
    await deliver(batch.map((m) => ({ ...m })));
    expect(seen).toEqual([]);

    // A new fetch starting inside the committed batch.
    await deliver([batch[1], batch[2], message(events[3])]);
    expect(seen).toEqual([events[3].eventId]);
    expect(await applied(db, groupId)).toBe(before + 1);
  });

  it('records nothing of a batch whose effects failed, so its redelivery applies it', async () => {
    const events = [0, 1].map((seq) => counterIncremented('failing', seq));
    const before = await applied(db, groupId);
    // One topic's batch that fails is tried again event by event: there the first event fails again.
    failures = kind === 'consumeBatch' ? 1 : 2;
    await expect(deliver(events.map(message))).rejects.toThrow('the database went away');
    expect(await applied(db, groupId)).toBe(before);

    seen = [];
    await deliver(events.map(message));
    expect(seen).toEqual(events.map((e) => e.eventId));
    expect(await applied(db, groupId)).toBe(before + 2);
  });
});

describe('consume with a prepare step (an effect outside the database)', () => {
  let db: Database;
  let deliver: (messages: ConsumedMessage[]) => Promise<void>;
  let prepared: string[];
  let refusals = 0;
  const groupId = 'preparing';

  beforeAll(async () => {
    db = await databases.open('consumer_prepare');
    const handOver = handOverBus();
    deliver = handOver.deliver;
    await consume({
      bus: handOver.bus,
      db,
      logger: testLogger,
      groupId,
      topic: TOPIC,
      schema: CounterIncremented,
      prepare: async (event) => {
        if (refusals > 0) {
          refusals -= 1;
          throw new Error('the provider is unavailable');
        }
        prepared.push(event.eventId);
      },
      apply: async () => undefined,
    });
  });

  beforeEach(() => {
    prepared = [];
  });

  it('runs the step for every new event of a batch, once each, in order, before recording it', async () => {
    const events = [0, 1, 2, 3, 4, 5].map((seq) => counterIncremented('prepared', seq));
    await deliver([message(events[0])]);
    prepared = [];
    const before = await applied(db, groupId);

    await deliver([...events, events[3]].map(message));

    expect(prepared).toEqual(events.slice(1).map((e) => e.eventId));
    expect(await applied(db, groupId)).toBe(before + 5);
  });

  it('records none of a batch from the event whose step failed on, and runs the step for them on redelivery', async () => {
    const events = [0, 1, 2].map((seq) => counterIncremented('prepare-failing', seq));
    const before = await applied(db, groupId);
    await deliver([message(events[0])]);
    prepared = [];

    refusals = 1;
    await expect(deliver(events.map(message))).rejects.toThrow('the provider is unavailable');
    expect(prepared).toEqual([]);
    expect(await applied(db, groupId)).toBe(before + 1);

    await deliver(events.map(message));
    expect(prepared).toEqual([events[1].eventId, events[2].eventId]);
    expect(await applied(db, groupId)).toBe(before + 3);
  });
});

describe('the metrics of a consumer', () => {
  it('counts the messages it sends to the dead-letter topic from zero, and keeps the lag the bus reports under the broker group', async () => {
    const db = await databases.open('consumer_metrics');
    const metrics = new EventMetrics(db, testLogger);
    const handOver = handOverBus();
    await consume({ bus: handOver.bus, db, logger: testLogger, groupId: 'counting', topic: TOPIC, schema: CounterIncremented, metrics, apply: async () => undefined });
    const deadLettered = async () => (await metrics.deadLettered.get()).values.map(({ labels, value }) => [labels, value]);
    expect(await deadLettered()).toEqual([[{ group: 'counting', topic: TOPIC }, 0]]);

    await handOver.deliver([{ topic: TOPIC, partition: 0, offset: String(offset++), key: 'k', value: '{"not":"an event"}' }]);
    expect(await deadLettered()).toEqual([[{ group: 'counting', topic: TOPIC }, 1]]);

    handOver.options()?.onLag?.(TOPIC, 42);
    expect((await metrics.consumerLag.get()).values.map(({ labels, value }) => [labels, value])).toEqual([[{ group: `counting.${TOPIC}`, topic: TOPIC }, 42]]);
  });
});
