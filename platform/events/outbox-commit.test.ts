/**
 * What a service gets from the outbox without asking: its relay publishes once the transaction that
 * recorded an event commits (no wake call, no poll), and the event carries the id of the request
 * that caused it to the consumer, whose log lines and outgoing calls then carry it too.
 */
import { randomUUID } from 'node:crypto';
import { CounterIncremented, TestDatabases, counterIncremented, makeKafkaBus, testLogger } from '../../test/event-fixtures';
import { runConfig } from '../../test/stack';
import { waitFor } from '../../test/wait';
import { currentContext, runInContext } from '../request-context';
import type { EventBus } from './bus';
import { consume } from './consumer';
import { MemoryBus } from './memory-bus';
import { enqueueMessage } from './outbox';
import { OutboxRelay } from './outbox-relay';

jest.setTimeout(60000);

const kafka = runConfig.kafkaBrokers !== undefined;
const databases = new TestDatabases();
let bus: EventBus;

beforeAll(() => {
  bus = kafka ? makeKafkaBus({ clientId: 'outbox-commit-test' }) : new MemoryBus();
});
afterAll(async () => {
  await bus.close();
  await databases.dropAll();
});

/** A relay that never polls (an hour between passes) and a consumer that notes each event's context. */
async function setUp(service: string) {
  const db = await databases.open(service);
  const topic = `outbox-commit-${randomUUID()}`;
  const seen: { eventId: string; requestId?: string; context?: string }[] = [];
  const subscription = await consume({
    bus,
    db,
    logger: testLogger,
    groupId: `commit-${randomUUID()}`,
    topic,
    schema: CounterIncremented,
    apply: async (event) => {
      seen.push({ eventId: event.eventId, requestId: currentContext()?.requestId, context: currentContext()?.eventId });
    },
  });
  const relay = new OutboxRelay({ db, bus, logger: testLogger, pollMs: 3_600_000 });
  relay.start();
  await waitFor(async () => (await relay.pending()) === 0, { what: 'the first pass of the relay' });
  return {
    db,
    topic,
    seen,
    async stop() {
      await relay.stop();
      await subscription.stop();
    },
  };
}

describe(`the outbox on the ${kafka ? 'kafka' : 'memory'} bus`, () => {
  it('publishes an event once the transaction that recorded it commits, with no call to wake the relay', async () => {
    const s = await setUp('outbox_commit');
    try {
      const event = counterIncremented('consumed', 1);
      await s.db.transaction((manager) => enqueueMessage(manager, s.topic, 'key', event));

      await waitFor(() => s.seen.length === 1, { what: 'the event consumed', timeoutMs: 30000 });
      expect(s.seen[0].eventId).toBe(event.eventId);
    } finally {
      await s.stop();
    }
  });

  it('publishes nothing of a transaction that rolled back, and what commits after it', async () => {
    const s = await setUp('outbox_rollback');
    try {
      const [lost, kept] = [counterIncremented('consumed', 1), counterIncremented('consumed', 2)];
      await expect(
        s.db.transaction(async (manager) => {
          await enqueueMessage(manager, s.topic, 'key', lost);
          throw new Error('the change failed');
        }),
      ).rejects.toThrow('the change failed');
      await s.db.transaction((manager) => enqueueMessage(manager, s.topic, 'key', kept));

      await waitFor(() => s.seen.length >= 1, { what: 'the committed event consumed', timeoutMs: 30000 });
      expect(s.seen.map((e) => e.eventId)).toEqual([kept.eventId]);
    } finally {
      await s.stop();
    }
  });

  it('refuses an event recorded outside a transaction, which could commit without its change', async () => {
    const s = await setUp('outbox_no_transaction');
    try {
      await expect(enqueueMessage(s.db.manager, s.topic, 'key', counterIncremented('consumed', 1))).rejects.toThrow('inside the transaction');
    } finally {
      await s.stop();
    }
  });

  it('hands the consumer the id of the request that recorded the event', async () => {
    const s = await setUp('outbox_request_id');
    try {
      const [fromRequest, fromNoRequest] = [counterIncremented('consumed', 1), counterIncremented('consumed', 2)];
      await runInContext({ requestId: 'checkout-7f3a' }, () => s.db.transaction((manager) => enqueueMessage(manager, s.topic, 'key', fromRequest)));
      await runInContext({}, () => s.db.transaction((manager) => enqueueMessage(manager, s.topic, 'key', fromNoRequest)));

      await waitFor(() => s.seen.length === 2, { what: 'both events consumed', timeoutMs: 30000 });
      expect(s.seen).toEqual([
        { eventId: fromRequest.eventId, requestId: 'checkout-7f3a', context: fromRequest.eventId },
        { eventId: fromNoRequest.eventId, requestId: undefined, context: fromNoRequest.eventId },
      ]);
    } finally {
      await s.stop();
    }
  });
});
