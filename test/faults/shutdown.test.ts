/**
 * Graceful shutdown of a real service process: on SIGTERM the payment service refuses new
 * connections, finishes the checkout in flight, publishes what its outbox holds, stops its consumer
 * with its offsets committed, and exits 0 in bounded time. Runs on whatever the suite runs on
 * (SQLite and the in-process bus, or MariaDB and Kafka, where the committed offsets are checked too).
 * The process is spawned from the TypeScript sources (see process.ts), so no build is needed.
 * Then the outbox relay's flush on stop on its own: it publishes what is left, bounded in time.
 */
import { consumerGroupOf } from '../../platform/events/consumer';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { EventBus, Subscription } from '../../platform/events/bus';
import { MemoryBus } from '../../platform/events/memory-bus';
import { OutboxEvent, enqueueMessage } from '../../platform/events/outbox';
import { OutboxRelay } from '../../platform/events/outbox-relay';
import { TOPICS } from '../../platform/events/topics';
import { STOP_BOUND_MS } from '../../platform/run';
import { Payment } from '../../subgraphs/payment/entities';
import { createBook } from '../commerce';
import { TestDatabases, counterIncremented, makeKafkaBus, orderCreatedEvent, testLogger } from '../event-fixtures';
import { adminSession, dropDatabases, registeredUser, startStack, waitFor, type Stack } from '../harness';
import { paymentDatabase, paymentEnv, watchedSimulator, type WatchedSimulator } from './payments';
import { spawnService, within, type ServiceProcess } from './process';

jest.setTimeout(90_000);

/** True once nothing accepts connections on the port any more. */
function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

let stack: Stack;
let stripe: WatchedSimulator;
let payment: ServiceProcess | undefined;
let observer: Subscription | undefined;
const published = new Set<string>();

beforeAll(async () => {
  stack = await startStack({ services: ['book'] });
  stripe = await watchedSimulator(() => payment && `${payment.url}/api/payments/webhook`, stack.config.logLevel);
  if (stack.bus.kind === 'kafka') {
    observer = await stack.bus.subscribe({
      groupId: `observer-${randomUUID()}`,
      topics: [TOPICS.paymentCreated],
      handle: async (message) => void published.add(JSON.parse(message.value).paymentId),
    });
  }
}, 60_000);
afterAll(async () => {
  payment?.child.kill('SIGKILL');
  await observer?.stop();
  await stripe?.stop();
  // The payment process made its own database, which the stack does not know of; the stack removes the data folder.
  if (stack) await dropDatabases(stack.config, ['payment'], { keepDataDir: true });
  await stack?.stop();
});

it('drains the checkout in flight, refuses new connections, flushes the outbox, commits its offsets and exits 0 on SIGTERM', async () => {
  const admin = await adminSession(stack);
  const book = await createBook(stack, admin.bearer, 'Closing Time', 15);
  const buyer = await registeredUser(stack);
  const checkout = (url: string) =>
    request(url)
      .post('/api/payments/checkout')
      .set('Authorization', buyer.bearer)
      .send({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] });
  payment = await spawnService('payment', paymentEnv(stack, stripe.url));

  // Before: a checkout done, and on Kafka an order-created the payment's consumer applies.
  const first = await checkout(payment.url);
  expect(first.status).toBe(200);
  if (stack.bus.kind === 'kafka') {
    const orderId = randomUUID();
    const event = orderCreatedEvent({ orderId, paymentId: first.body.paymentId, userId: buyer.userId, totalAmount: 15, items: [], status: 'PENDING' });
    await stack.bus.publish([{ topic: TOPICS.orderCreated, key: orderId, value: JSON.stringify(event) }]);
    await waitFor(async () => (await request(payment!.url).get(`/api/payments/${first.body.paymentId}`).set('Authorization', buyer.bearer)).body.orderId === orderId, {
      what: 'the order-created event to be applied',
    });
  }

  // A checkout in flight (Stripe answers in 2 s) when SIGTERM arrives, on a kept-alive connection
  // as proxies and browsers hold them (fetch keeps connections alive; supertest does not).
  stripe.simulator.injectFaults({ delayMs: 2000 });
  let answered = false;
  const inFlight = fetch(`${payment.url}/api/payments/checkout`, {
    method: 'POST',
    headers: { authorization: buyer.bearer, 'content-type': 'application/json' },
    body: JSON.stringify({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] }),
  }).then(async (res) => {
    answered = true;
    return { status: res.status, connection: res.headers.get('connection'), body: (await res.json()) as Record<string, string> };
  });
  await waitFor(() => stripe.intentRequests() === 2, { what: 'the second checkout to reach Stripe' });
  payment.child.kill('SIGTERM');

  await waitFor(() => refusesConnections(payment!.port), { what: 'new connections to be refused', timeoutMs: 5000 });
  expect(answered).toBe(false);
  const drained = await inFlight;
  expect(drained.status).toBe(200);
  expect(drained.body.paymentIntentId).toMatch(/^pi_/);
  // The answer closes its kept-alive connection, so no idle connection holds the server open until
  // the HTTP grace period forces it.
  expect(drained.connection).toBe('close');

  // Exit 0 means the stop finished before its watchdog (STOP_BOUND_MS) exited 1.
  expect(await within(payment.exited, STOP_BOUND_MS, 'the process to exit')).toEqual({ code: 0, signal: null });

  // After: what it committed is there, and nothing waits in its outbox.
  const db = await paymentDatabase(stack);
  try {
    expect(await db.manager.count(OutboxEvent)).toBe(0);
    const ids = [first.body.paymentId, drained.body.paymentId];
    for (const id of ids) expect((await db.manager.findOneByOrFail(Payment, { id })).paymentIntentId).not.toBeNull();
    if (stack.bus.kind === 'kafka') {
      await waitFor(() => ids.every((id) => published.has(id)), { what: 'both payment-created events on Kafka' });
      const ns = stack.config.eventNamespace;
      const admin = makeKafkaBus({ brokers: stack.config.kafkaBrokers, clientId: 'shutdown-test' });
      try {
        expect(await admin.uncommitted(`${ns}${consumerGroupOf('payment')}.${TOPICS.orderCreated}`, `${ns}${TOPICS.orderCreated}`)).toBe(0);
      } finally {
        await admin.close();
      }
    }
  } finally {
    await db.close();
  }
});

it('publishes on stop what the outbox still holds, in order, and only with a flush period', async () => {
  const databases = new TestDatabases();
  const bus = new MemoryBus();
  try {
    const db = await databases.open('flush_on_stop');
    const relay = new OutboxRelay({ db, bus, logger: testLogger, pollMs: 60_000 });
    // Recorded with no pass to come, as by a request that committed while the server drained.
    for (let seq = 0; seq < 3; seq++) await db.transaction((manager) => enqueueMessage(manager, 'flushed', `key-${seq}`, counterIncremented('flushed', seq)));
    await relay.stop();
    expect(await relay.pending()).toBe(3);

    await relay.stop({ flushMs: 5000 });
    expect(await relay.pending()).toBe(0);
    expect(bus.log('flushed').map((entry) => JSON.parse(entry.message.value).seq)).toEqual([0, 1, 2]);
  } finally {
    await bus.close();
    await databases.dropAll();
  }
});

it('gives up a flush the bus does not acknowledge in time, leaving the rows for the next start', async () => {
  const databases = new TestDatabases();
  try {
    const db = await databases.open('flush_hangs');
    let publishes = 0;
    const hanging: EventBus = {
      kind: 'memory',
      publish: () => {
        publishes += 1;
        return new Promise<void>(() => undefined);
      },
      subscribe: () => Promise.reject(new Error('not used')),
      health: async () => undefined,
      close: async () => undefined,
    };
    const relay = new OutboxRelay({ db, bus: hanging, logger: testLogger });
    await db.transaction((manager) => enqueueMessage(manager, 'stuck', 'key', counterIncremented('stuck', 0)));
    // The stop returns although the publish it flushed with never settles.
    await relay.stop({ flushMs: 300 });
    expect(publishes).toBe(1);
    expect(await relay.pending()).toBe(1);
  } finally {
    await databases.dropAll();
  }
});
