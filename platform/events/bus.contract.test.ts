/**
 * One contract for every EventBus, run against the in-process bus and against a real Kafka broker
 * (KAFKA_BROKERS): what the services rely on, whichever column of the design they run in.
 */
import { randomUUID } from 'node:crypto';
import net, { type Socket } from 'node:net';
import type { Database } from '../database';
import { waitFor } from '../../test/wait';
import { Counter, CounterIncremented, TestDatabases, counterIncremented, freePorts, makeKafkaBus, readCounter, testLogger } from '../../test/event-fixtures';
import { describeIf } from '../../test/skip';
import { runConfig } from '../../test/stack';
import { PUBLISHER, PUBLISHER_HEADER, type BusMessage, type ConsumedMessage, type EventBus, type SubscribeOptions } from './bus';
import { consume } from './consumer';
import { MemoryBus } from './memory-bus';
import { deadLetterTopic } from './topics';

jest.setTimeout(90000);

const databases = new TestDatabases();
afterAll(() => databases.dropAll());

function busContract(kind: 'memory' | 'kafka', makeBus: () => EventBus): void {
  let bus: EventBus;
  let db: Database;
  const subscriptions: { stop(): Promise<void> }[] = [];
  const topic = () => `contract-${randomUUID()}`;
  const group = () => `group-${randomUUID()}`;

  beforeAll(async () => {
    bus = makeBus();
    db = await databases.open(`contract_${kind}`);
  });
  afterEach(async () => {
    await Promise.all(subscriptions.splice(0).map((s) => s.stop()));
  });
  afterAll(async () => {
    await bus?.close();
  });

  /** Subscribes and records every message the handler got, in delivery order. */
  async function record(options: Omit<SubscribeOptions, 'handle'>, handle?: (m: ConsumedMessage) => Promise<void>): Promise<ConsumedMessage[]> {
    const received: ConsumedMessage[] = [];
    const subscription = await bus.subscribe({
      ...options,
      handle: async (message) => {
        await handle?.(message);
        received.push(message);
      },
    });
    subscriptions.push(subscription);
    return received;
  }

  const messages = (t: string, count: number, key: (i: number) => string): BusMessage[] =>
    Array.from({ length: count }, (_, i) => ({ topic: t, key: key(i), value: JSON.stringify({ seq: i, key: key(i) }) }));
  const seqOf = (m: ConsumedMessage) => (JSON.parse(m.value) as { seq: number }).seq;

  it('answers its health check', async () => {
    await expect(bus.health()).resolves.toBeUndefined();
  });

  it('delivers key, value and headers, including what was published before the group subscribed', async () => {
    const t = topic();
    await bus.publish([{ topic: t, key: 'book-1', value: '{"n":1}', headers: { eventId: 'e-1', 'x-trace': 'abc' } }]);
    const received = await record({ groupId: group(), topics: [t] });
    await bus.publish([{ topic: t, key: 'book-1', value: '{"n":2}', headers: { eventId: 'e-2' } }]);

    await waitFor(() => received.length >= 2, { what: 'both messages' });
    expect(received.map((m) => m.value)).toEqual(['{"n":1}', '{"n":2}']);
    expect(received[0]).toMatchObject({ topic: t, key: 'book-1', headers: { eventId: 'e-1', 'x-trace': 'abc' } });
    expect(received[1].headers).toEqual({ eventId: 'e-2', [PUBLISHER_HEADER]: PUBLISHER });
    expect(typeof received[0].partition).toBe('number');
    expect(BigInt(received[1].offset)).toBeGreaterThan(BigInt(received[0].offset));
  });

  it('starts a new group at the end of the topic with fromBeginning false: only what is published after it subscribed', async () => {
    const t = topic();
    await bus.publish([{ topic: t, key: 'k', value: '{"n":"before"}' }]);
    const received = await record({ groupId: group(), topics: [t], fromBeginning: false });
    await bus.publish([{ topic: t, key: 'k', value: '{"n":"after"}' }]);
    await waitFor(() => received.length >= 1, { what: 'the message published after' });
    // A second group from the beginning gets both: the first had been published.
    const everything = await record({ groupId: group(), topics: [t] });
    await waitFor(() => everything.length >= 2, { what: 'both messages from the beginning' });
    expect(received.map((m) => m.value)).toEqual(['{"n":"after"}']);
  });

  it('keeps the order of the messages that share a key', async () => {
    const t = topic();
    const all = messages(t, 100, (i) => `key-${i % 5}`);
    const received = await record({ groupId: group(), topics: [t] });
    for (let i = 0; i < all.length; i += 25) await bus.publish(all.slice(i, i + 25));

    await waitFor(() => received.length >= 100, { what: '100 messages' });
    for (let k = 0; k < 5; k++) {
      const seqs = received.filter((m) => m.key === `key-${k}`).map(seqOf);
      expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i * 5 + k));
    }
  });

  it('shares the messages among the consumers of one group, each handled once', async () => {
    const t = topic();
    const groupId = group();
    const first = await record({ groupId, topics: [t] });
    const second = await record({ groupId, topics: [t] });
    await bus.publish(messages(t, 60, (i) => `book-${i}`));

    await waitFor(() => first.length + second.length >= 60, { what: '60 messages across both consumers' });
    const seqs = [...first, ...second].map(seqOf).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(first.length).toBeGreaterThan(0);
    expect(second.length).toBeGreaterThan(0);
  });

  it('gives every message to each consumer group', async () => {
    const t = topic();
    const analytics = await record({ groupId: group(), topics: [t] });
    const orders = await record({ groupId: group(), topics: [t] });
    await bus.publish(messages(t, 10, () => 'payment-1'));

    await waitFor(() => analytics.length >= 10 && orders.length >= 10, { what: 'both groups to get 10 messages' });
    expect(analytics.map(seqOf)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(orders.map(seqOf)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('redelivers a message whose handler failed, after a back-off, and skips nothing after it', async () => {
    const t = topic();
    const attempts: number[] = [];
    let failuresLeft = 2;
    const handled = await record({ groupId: group(), topics: [t] }, async (message) => {
      attempts.push(seqOf(message));
      if (seqOf(message) === 2 && failuresLeft-- > 0) throw new Error('database unavailable');
    });
    await bus.publish(messages(t, 5, () => 'order-1'));

    await waitFor(() => handled.length >= 5, { what: 'all 5 messages handled' });
    expect(attempts).toEqual([0, 1, 2, 2, 2, 3, 4]);
    expect(handled.map(seqOf)).toEqual([0, 1, 2, 3, 4]);
  });

  it('sends unparseable and invalid events to the dead-letter topic and applies the later ones', async () => {
    const t = topic();
    const groupId = group();
    await db.manager.insert(Counter, { name: t, value: 0 });
    const deadLetters = await record({ groupId: group(), topics: [deadLetterTopic(t)] });
    subscriptions.push(
      await consume({
        bus,
        db,
        logger: testLogger,
        groupId,
        topic: t,
        schema: CounterIncremented,
        apply: async (event, manager) => {
          await manager.increment(Counter, { name: event.counter }, 'value', 1);
        },
      }),
    );
    const notJson = '{"eventId": ';
    const invalid = JSON.stringify({ eventId: 'not-a-uuid', type: 'CounterIncremented', counter: t, seq: -1 });
    const valid = [counterIncremented(t, 0), counterIncremented(t, 1)];
    await bus.publish([JSON.stringify(valid[0]), notJson, invalid, JSON.stringify(valid[1])].map((value) => ({ topic: t, key: 'counter-1', value })));

    await waitFor(async () => deadLetters.length >= 2 && (await readCounter(db, t)) >= 2, { what: 'two dead letters and two applied events' });
    expect(deadLetters.map((m) => m.value)).toEqual([notJson, invalid]);
    expect(deadLetters[0].headers).toMatchObject({ 'dlt-reason': 'payload is not valid JSON', 'dlt-original-topic': t, 'dlt-consumer': groupId });
    expect(deadLetters[1].headers?.['dlt-reason']).toMatch(/^payload failed validation: .*eventId/);
    expect(deadLetters[1].key).toBe('counter-1');
    expect(await readCounter(db, t)).toBe(2);
  });
}

describe('memory bus', () => busContract('memory', () => new MemoryBus()));

describe('kafka bus without a reachable broker', () => {
  it('rejects health checks and publishes within a bounded time, so callers can back off', async () => {
    const [port] = await freePorts(1);
    const bus = makeKafkaBus({ brokers: [`127.0.0.1:${port}`], clientId: 'bus-contract', publishTimeoutMs: 5000, healthTimeoutMs: 2000 });
    try {
      await expect(bus.health()).rejects.toThrow();
      await expect(bus.publish([{ topic: `contract-${randomUUID()}`, key: 'k', value: '{}' }])).rejects.toThrow();
    } finally {
      await bus.close();
    }
  });
});

describeIf(runConfig.kafkaBrokers !== undefined, 'kafka bus', 'set KAFKA_BROKERS to run', () => {
  busContract('kafka', () => makeKafkaBus({ clientId: 'bus-contract' }));

  it('publishes when its connections to the broker were closed under it, without the caller trying again', async () => {
    // A broker closes a connection it finds idle; Node then ends the socket, and kafkajs, not told
    // yet, writes to it ("write after end"). Here every socket the bus opened is ended between two
    // publishes, as the broker's close would end them.
    const connect = net.connect.bind(net);
    const sockets: Socket[] = [];
    const spy = jest.spyOn(net, 'connect').mockImplementation((...args: Parameters<typeof net.connect>) => {
      const socket = connect(...args);
      sockets.push(socket);
      return socket;
    });
    const bus = makeKafkaBus({ clientId: 'bus-contract' });
    try {
      const t = `contract-${randomUUID()}`;
      await bus.publish([{ topic: t, key: 'k', value: 'before' }]);
      for (const socket of sockets) socket.end();
      await bus.publish([{ topic: t, key: 'k', value: 'after' }]);
      const received: string[] = [];
      const subscription = await bus.subscribe({ groupId: `group-${randomUUID()}`, topics: [t], handle: async (message) => void received.push(message.value) });
      await waitFor(() => received.length === 2, { what: 'both messages', timeoutMs: 60_000 });
      expect(received).toEqual(['before', 'after']);
      await subscription.stop();
    } finally {
      spy.mockRestore();
      await bus.close();
    }
  });

  it('replaces a consumer whose handler never returns, and its replacement handles the message', async () => {
    const bus = makeKafkaBus({ clientId: 'bus-contract', stallTimeoutMs: 2000 });
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const calls: string[] = [];
    try {
      const t = `contract-${randomUUID()}`;
      await bus.publish([{ topic: t, key: 'k', value: 'first' }]);
      const subscription = await bus.subscribe({
        groupId: `group-${randomUUID()}`,
        topics: [t],
        handle: async (message) => {
          calls.push(message.value);
          if (calls.length === 1) await stuck;
        },
      });
      await waitFor(() => calls.length, { what: 'the replacement to get the message again', accept: (n) => n >= 2, timeoutMs: 60_000, intervalMs: 100 });
      expect(calls.slice(0, 2)).toEqual(['first', 'first']);
      release();
      await subscription.stop();
    } finally {
      release();
      await bus.close();
    }
  });

  it('replaces a consumer that keeps a partition with readable messages but no longer fetches it', async () => {
    // kafkajs builds each fetch from its consumer group's active partitions. The first consumer of
    // this group is made to leave them all out while it goes on fetching, as a consumer that holds
    // its partitions but no longer reads them would.
    const { prototype } = require('kafkajs/src/consumer/consumerGroup') as { prototype: { getActiveTopicPartitions(this: { groupId: string }): Record<string, Set<number>> } };
    const original = prototype.getActiveTopicPartitions;
    const groupId = `group-${randomUUID()}`;
    const stuck = new Set<object>();
    prototype.getActiveTopicPartitions = function (this: { groupId: string }) {
      const active = original.call(this);
      if (this.groupId !== groupId) return active;
      if (stuck.size === 0) stuck.add(this);
      return stuck.has(this) ? Object.fromEntries(Object.keys(active).map((topic) => [topic, new Set<number>()])) : active;
    };
    const bus = makeKafkaBus({ clientId: 'bus-contract', stallTimeoutMs: 2000 });
    const received: string[] = [];
    try {
      const t = `contract-${randomUUID()}`;
      await bus.publish([{ topic: t, key: 'k', value: 'waiting' }]);
      const subscription = await bus.subscribe({ groupId, topics: [t], handle: async (message) => void received.push(message.value) });
      await waitFor(() => received, { what: 'the replacement consumer to read the message', accept: (values) => values.length > 0, timeoutMs: 60_000, intervalMs: 100 });
      expect(stuck.size).toBe(1);
      expect(received).toEqual(['waiting']);
      await subscription.stop();
    } finally {
      prototype.getActiveTopicPartitions = original;
      await bus.close();
    }
  });

  it('rebalances its group when a partition with readable messages is held by no member', async () => {
    // The group's leader assigns the partitions its own metadata lists. The first consumer's metadata
    // is made to leave partition 1 out, so its assignment leaves it to no member and nobody fetches it.
    const { prototype } = require('kafkajs/src/cluster') as { prototype: { findTopicPartitionMetadata(this: object, topic: string): { partitionId: number }[] } };
    const original = prototype.findTopicPartitionMetadata;
    const t = `contract-${randomUUID()}`;
    let armed = false;
    const partial = new Set<object>();
    prototype.findTopicPartitionMetadata = function (this: object, topic: string) {
      const partitions = original.call(this, topic);
      if (topic !== t || !armed) return partitions;
      if (partial.size === 0) partial.add(this);
      return partial.has(this) ? partitions.filter(({ partitionId }) => partitionId !== 1) : partitions;
    };
    const bus = makeKafkaBus({ clientId: 'bus-contract', stallTimeoutMs: 2000 });
    const received: ConsumedMessage[] = [];
    try {
      await bus.publish(Array.from({ length: 30 }, (_, i) => ({ topic: t, key: `k${i}`, value: `m${i}` })));
      armed = true;
      const groupId = `group-${randomUUID()}`;
      const subscription = await bus.subscribe({ groupId, topics: [t], handle: async (message) => void received.push(message) });
      await waitFor(() => received.length, { what: 'all 30 messages, partition 1 included', accept: (n) => n >= 30, timeoutMs: 60_000, intervalMs: 100 });
      expect(partial.size).toBe(1);
      expect(new Set(received.map((m) => m.value)).size).toBe(30);
      expect(received.some((m) => m.partition === 1)).toBe(true);
      const { members } = await bus.groupMembers(groupId);
      expect(members.flatMap(({ assignment }) => assignment[t] ?? []).sort()).toEqual([0, 1, 2]);
      await subscription.stop();
    } finally {
      prototype.findTopicPartitionMetadata = original;
      await bus.close();
    }
  });

  it('leaves no consumer behind when a subscription fails to join its group', async () => {
    // A service whose start fails is stopped and started again (platform/run.ts); the failed
    // attempt's consumer must not come back later and take partitions from the next attempt's. The
    // group's joins fail as they do while a fresh broker still loads its group coordinator.
    const { prototype } = require('kafkajs/src/consumer/consumerGroup') as { prototype: { joinAndSync(this: { groupId: string }): Promise<unknown> } };
    const original = prototype.joinAndSync;
    const groupId = `group-${randomUUID()}`;
    let coordinatorLoading = true;
    prototype.joinAndSync = function (this: { groupId: string }) {
      if (this.groupId === groupId && coordinatorLoading) return Promise.reject(Object.assign(new Error('The coordinator is loading'), { retriable: true }));
      return original.call(this);
    };
    const stallTimeoutMs = 500;
    const failing = makeKafkaBus({ clientId: 'bus-contract', joinTimeoutMs: 2000, stallTimeoutMs });
    const healthy = makeKafkaBus({ clientId: 'bus-contract', stallTimeoutMs });
    const t = `contract-${randomUUID()}`;
    const byFailed: string[] = [];
    const byNext: string[] = [];
    try {
      await healthy.publish(Array.from({ length: 30 }, (_, i) => ({ topic: t, key: `k${i}`, value: `m${i}` })));
      await expect(failing.subscribe({ groupId, topics: [t], handle: async (m) => void byFailed.push(m.value) })).rejects.toThrow(/joining consumer group/);
      coordinatorLoading = false;
      // No condition marks a consumer that never comes back: the window is several stall timeouts,
      // within which a leaked consumer's watch would have started it again.
      await new Promise((resolve) => setTimeout(resolve, 6 * stallTimeoutMs));
      const next = await healthy.subscribe({ groupId, topics: [t], handle: async (m) => void byNext.push(m.value) });
      await waitFor(() => byFailed.length + byNext.length, { what: 'all 30 messages to be handled', accept: (n) => n >= 30, timeoutMs: 60_000, intervalMs: 100 });
      expect({ byFailed: byFailed.length, byNext: byNext.length }).toEqual({ byFailed: 0, byNext: 30 });
      await next.stop();
    } finally {
      prototype.joinAndSync = original;
      await Promise.all([failing.close(), healthy.close()]);
    }
  });

  it('leaves no member behind when it is stopped while its consumer is still joining the group', async () => {
    // A service whose start is undone (platform/run.ts) stops consumers wherever they are, also in
    // the middle of a join. The first join of this group is held until the stop has been asked for.
    const { prototype } = require('kafkajs/src/consumer/consumerGroup') as { prototype: { joinAndSync(this: { groupId: string }): Promise<unknown> } };
    const original = prototype.joinAndSync;
    const groupId = `group-${randomUUID()}`;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = true;
    prototype.joinAndSync = function (this: { groupId: string }) {
      if (this.groupId !== groupId || !holding) return original.call(this);
      holding = false;
      return held.then(() => original.call(this));
    };
    const undone = makeKafkaBus({ clientId: 'bus-contract', stallTimeoutMs: 2000 });
    const next = makeKafkaBus({ clientId: 'bus-contract', stallTimeoutMs: 2000 });
    const t = `contract-${randomUUID()}`;
    const byUndone: string[] = [];
    const byNext: string[] = [];
    try {
      await next.publish(Array.from({ length: 30 }, (_, i) => ({ topic: t, key: `k${i}`, value: `m${i}` })));
      const subscribing = undone.subscribe({ groupId, topics: [t], handle: async (m) => void byUndone.push(m.value) }).catch(() => undefined);
      await waitFor(() => !holding, { what: 'the first join to be held', timeoutMs: 30_000, intervalMs: 20 });
      const closing = undone.close();
      // The join completes only after the stop was asked for (every step of close() up to the
      // consumer's disconnect runs before this turn of the event loop ends).
      setImmediate(release);
      await Promise.all([closing, subscribing]);
      const subscription = await next.subscribe({ groupId, topics: [t], handle: async (m) => void byNext.push(m.value) });
      await waitFor(() => byNext.length, { what: 'all 30 messages to be handled by the next member', accept: (n) => n >= 30, timeoutMs: 60_000, intervalMs: 100 });
      expect({ byUndone: byUndone.length, byNext: new Set(byNext).size }).toEqual({ byUndone: 0, byNext: 30 });
      const { members } = await next.groupMembers(groupId);
      expect(members).toHaveLength(1);
      await subscription.stop();
    } finally {
      release();
      prototype.joinAndSync = original;
      await Promise.all([undone.close(), next.close()]);
    }
  });

  it('refuses a member of a group that would subscribe other topics than the group does', async () => {
    const bus = makeKafkaBus({ clientId: 'bus-contract' });
    try {
      const groupId = `group-${randomUUID()}`;
      const subscription = await bus.subscribe({ groupId, topics: [`contract-${randomUUID()}`], handle: async () => undefined });
      await expect(bus.subscribe({ groupId, topics: [`contract-${randomUUID()}`], handle: async () => undefined })).rejects.toThrow(/must subscribe the same topics/);
      await subscription.stop();
    } finally {
      await bus.close();
    }
  });
});
