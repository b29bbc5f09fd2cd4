/**
 * The outbox's promise, end to end through a real database and the configured bus: every committed
 * event arrives, whatever the broker or the relay does, and the idempotent consumer applies it once.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { waitFor } from '../../test/wait';
import { Counter, CounterIncremented, TestDatabases, counterIncremented, freePorts, makeKafkaBus, readCounter, testLogger } from '../../test/event-fixtures';
import { itIf } from '../../test/skip';
import { runConfig } from '../../test/stack';
import type { BusMessage, EventBus, SubscribeOptions, Subscription } from './bus';
import { ProcessedEvent, consume } from './consumer';
import { MemoryBus } from './memory-bus';
import { enqueueMessage } from './outbox';
import { OutboxRelay } from './outbox-relay';

jest.setTimeout(120000);

const kafka = runConfig.kafkaBrokers !== undefined;
const databases = new TestDatabases();
afterAll(() => databases.dropAll());

/** Watches a bus (publishes, deliveries) and can refuse publishes the way a broker that is down does. */
class ObservedBus implements EventBus {
  refusing = false;
  published = 0;
  rejections = 0;
  handled = 0;

  constructor(readonly inner: EventBus) {}

  get kind() {
    return this.inner.kind;
  }

  async publish(messages: BusMessage[]): Promise<void> {
    try {
      if (this.refusing) throw new Error('broker unavailable');
      await this.inner.publish(messages);
    } catch (error) {
      this.rejections++;
      throw error;
    }
    this.published += messages.length;
  }

  subscribe(options: SubscribeOptions): Promise<Subscription> {
    const { handle, handleBatch } = options;
    return this.inner.subscribe({
      ...options,
      handle:
        handle &&
        (async (message) => {
          await handle(message);
          this.handled++;
        }),
      handleBatch:
        handleBatch &&
        (async (messages) => {
          await handleBatch(messages);
          this.handled += messages.length;
        }),
    });
  }

  health(): Promise<void> {
    return this.inner.health();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A relay's bus that dies once the broker acknowledged: the relay never removes (or commits the removal of) the rows. */
class DiesAfterPublish implements EventBus {
  constructor(
    private readonly inner: EventBus,
    private readonly die: () => void,
  ) {}

  get kind() {
    return this.inner.kind;
  }

  async publish(messages: BusMessage[]): Promise<void> {
    await this.inner.publish(messages);
    this.die();
    throw new Error('relay died between publish and delete');
  }

  subscribe(options: SubscribeOptions): Promise<Subscription> {
    return this.inner.subscribe(options);
  }

  health(): Promise<void> {
    return this.inner.health();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A producing service and a consuming one sharing a database: state changes counted on both sides. */
async function pipeline(service: string, bus: EventBus) {
  const db = await databases.open(service);
  const topic = `outbox-${randomUUID()}`;
  const groupId = `counter-${randomUUID()}`;
  await db.manager.insert(Counter, [
    { name: 'produced', value: 0 },
    { name: 'consumed', value: 0 },
  ]);
  const subscription = await consume({
    bus,
    db,
    logger: testLogger,
    groupId,
    topic,
    schema: CounterIncremented,
    apply: async (event, manager) => {
      await manager.increment(Counter, { name: event.counter }, 'value', 1);
    },
  });
  let seq = 0;
  return {
    db,
    topic,
    /** Commits `count` state changes, each enqueuing its event in the same transaction. */
    async produce(count: number): Promise<void> {
      for (let i = 0; i < count; i++, seq++) {
        await db.transaction(async (manager) => {
          await manager.increment(Counter, { name: 'produced' }, 'value', 1);
          await enqueueMessage(manager, topic, `key-${seq % 7}`, counterIncremented('consumed', seq));
        });
      }
    },
    consumed: () => readCounter(db, 'consumed'),
    produced: () => readCounter(db, 'produced'),
    applied: () => db.manager.countBy(ProcessedEvent, { consumer: groupId }),
    stop: () => subscription.stop(),
  };
}

interface Outage {
  bus: ObservedBus;
  down(): Promise<void>;
  up(): Promise<void>;
}

async function deliversEverythingAfterAnOutage(service: string, outage: Outage): Promise<void> {
  const { bus } = outage;
  const p = await pipeline(service, bus);
  const relay = new OutboxRelay({ db: p.db, bus, logger: testLogger, pollMs: 200 });
  relay.start();
  try {
    await p.produce(1);
    await waitFor(async () => (await p.consumed()) === 1, { what: 'the event sent before the outage', timeoutMs: 60000 });

    await outage.down();
    const rejectionsBefore = bus.rejections;
    await p.produce(200);
    await waitFor(() => bus.rejections > rejectionsBefore, { what: 'a refused publish', timeoutMs: 60000 });
    expect(await relay.pending()).toBe(200);

    await outage.up();
    await waitFor(async () => (await relay.pending()) === 0 && (await p.consumed()) >= 201, {
      what: 'all 201 events consumed',
      timeoutMs: 150000,
      intervalMs: 200,
    });
    expect(await p.consumed()).toBe(201);
    expect(await p.applied()).toBe(201);
    expect(await p.produced()).toBe(201);
  } finally {
    await relay.stop();
    await p.stop();
  }
}

describe('outbox relay and idempotent consumer', () => {
  it('deliver every event committed while the bus refused publishes, once each', async () => {
    const bus = new ObservedBus(new MemoryBus());
    try {
      await deliversEverythingAfterAnOutage('outage_memory', {
        bus,
        down: async () => {
          bus.refusing = true;
        },
        up: async () => {
          bus.refusing = false;
        },
      });
    } finally {
      await bus.close();
    }
  });

  /** A second broker of our own, so stopping it leaves the one other test files use alone. */
  let secondBroker: { work: string; run(command: 'start' | 'stop'): Promise<unknown> } | undefined;
  // Here rather than in the test's finally: a test that times out must not leave a broker running.
  afterAll(async () => {
    if (!secondBroker) return;
    await secondBroker.run('stop');
    fs.rmSync(secondBroker.work, { recursive: true, force: true });
  });

  itIf(kafka, 'set KAFKA_BROKERS to run')(
    'deliver every event committed while the Kafka broker was stopped, once each',
    async () => {
      const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kafka-outage-'));
      const [port, controllerPort] = await freePorts(2);
      const env = { ...process.env, KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(controllerPort), KAFKA_WORK: work };
      const script = path.resolve(__dirname, '../../scripts/kafka.sh');
      const broker = { work, run: (command: 'start' | 'stop') => promisify(execFile)('bash', [script, command], { env, timeout: 120000 }) };
      secondBroker = broker;
      await broker.run('start');
      const bus = new ObservedBus(makeKafkaBus({ brokers: [`127.0.0.1:${port}`], clientId: 'outage-test', publishTimeoutMs: 10000 }));
      try {
        await deliversEverythingAfterAnOutage('outage_kafka', {
          bus,
          down: async () => {
            await broker.run('stop');
          },
          up: async () => {
            await broker.run('start');
          },
        });
      } finally {
        await bus.close();
      }
    },
    300000,
  );

  describe(`on the ${kafka ? 'kafka' : 'memory'} bus`, () => {
    let bus: ObservedBus;
    beforeEach(() => {
      bus = new ObservedBus(kafka ? makeKafkaBus({ clientId: 'outbox-test' }) : new MemoryBus());
    });
    afterEach(() => bus.close());

    it('republish what a relay published but did not delete before it died, and the consumer applies it once', async () => {
      const p = await pipeline('relay_crash', bus);
      try {
        await p.produce(200);
        const dying: OutboxRelay = new OutboxRelay({
          db: p.db,
          bus: new DiesAfterPublish(bus, () => void dying.stop()),
          logger: testLogger,
          batchSize: 50,
        });
        dying.start();
        await waitFor(() => bus.published >= 50, { what: 'the dying relay to publish its first batch' });
        await dying.stop();
        expect(await dying.pending()).toBe(200);

        const relay = new OutboxRelay({ db: p.db, bus, logger: testLogger, batchSize: 50 });
        relay.start();
        await waitFor(async () => (await relay.pending()) === 0, { what: 'the new relay to empty the outbox' });
        await relay.stop();
        await waitFor(() => bus.handled >= bus.published, { what: `all ${bus.published} publications handled` });

        expect(bus.published).toBeGreaterThanOrEqual(250);
        expect(await p.consumed()).toBe(200);
        expect(await p.applied()).toBe(200);
      } finally {
        await p.stop();
      }
    });

    itIf(runConfig.dbUrl !== undefined, 'set DB_URL to run')('two relays on one outbox publish every row once, in order per key (MySQL)', async () => {
      const p = await pipeline('two_relays', bus);
      const order = new Map<string, number[]>();
      const recording: EventBus = {
        kind: bus.kind,
        publish: async (messages) => {
          await bus.publish(messages);
          for (const m of messages) order.set(m.key, [...(order.get(m.key) ?? []), (JSON.parse(m.value) as { seq: number }).seq]);
        },
        subscribe: (options) => bus.subscribe(options),
        health: () => bus.health(),
        close: async () => undefined,
      };
      const relays = [1, 2].map(() => new OutboxRelay({ db: p.db, bus: recording, logger: testLogger, batchSize: 20, pollMs: 50 }));
      try {
        await p.produce(400);
        for (const relay of relays) relay.start();
        await waitFor(async () => (await relays[0].pending()) === 0, { what: 'the two relays to empty the outbox', timeoutMs: 60000 });
        await Promise.all(relays.map((relay) => relay.stop()));
        await waitFor(async () => (await p.consumed()) >= 400, { what: 'all 400 events consumed', timeoutMs: 60000 });

        expect(bus.published).toBe(400);
        for (const [, seqs] of order) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        expect(await p.consumed()).toBe(400);
      } finally {
        await Promise.all(relays.map((relay) => relay.stop()));
        await p.stop();
      }
    });

    it('apply an event delivered five times once', async () => {
      const p = await pipeline('redelivery', bus);
      try {
        const event = counterIncremented('consumed', 0);
        await p.db.transaction(async (manager) => {
          for (let i = 0; i < 5; i++) await enqueueMessage(manager, p.topic, 'counter-1', event);
        });
        const relay = new OutboxRelay({ db: p.db, bus, logger: testLogger });
        relay.start();
        await waitFor(async () => (await relay.pending()) === 0, { what: 'the outbox to empty' });
        await relay.stop();
        await waitFor(() => bus.handled >= 5, { what: 'five deliveries handled' });

        expect(bus.published).toBe(5);
        expect(await p.consumed()).toBe(1);
        expect(await p.applied()).toBe(1);
      } finally {
        await p.stop();
      }
    });
  });
});
