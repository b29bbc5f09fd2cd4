/**
 * Every service as two replicas on one MariaDB and one Kafka: they start together on empty
 * databases, migrate once, take purchases in turn, lose one payment, one order and one analytics
 * replica mid-run, and the shop still counts every purchase once; the login limit holds across
 * both auth replicas. Needs the built services (`npm run build`) and the full infrastructure.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ServiceName } from '../../platform/config';
import { TOPICS } from '../../platform/events/topics';
import { gatewayProof } from '../../platform/forwarded';
import { catalogueReferences, nextIsbn13 } from '../commerce';
import { FULL_INFRASTRUCTURE } from '../faults/infra';
import { describeIf } from '../skip';
import { newUser } from '../stack';
import { waitFor } from '../wait';
import { ReplicaCluster } from './cluster';

jest.setTimeout(600_000);

const PURCHASES = 500;
const BUYERS = 10;
const WORKERS = 8;

/** `send` on the next live replica of `service`; a replica dying under the request is retried on another (checkouts are idempotent by checkoutId). */
async function onReplica(cluster: ReplicaCluster, service: ServiceName, send: (url: string) => request.Test): Promise<request.Response> {
  for (let attempt = 1; ; attempt += 1) {
    const replica = cluster.pick(service);
    try {
      return await send(replica.url);
    } catch (error) {
      if (!replica.killed || attempt >= 3) throw error;
    }
  }
}

describeIf(FULL_INFRASTRUCTURE, 'two replicas of every service on one MariaDB and one Kafka', 'set KAFKA_BROKERS and DB_URL to run', () => {
  let cluster: ReplicaCluster;
  const began = Date.now();

  beforeAll(async () => {
    cluster = await ReplicaCluster.start();
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
    process.stdout.write(`replica suite: ${Math.round((Date.now() - began) / 1000)} s\n`);
  }, 120_000);

  it('starts every replica at once on empty databases and a fresh broker, each migration applied once', async () => {
    await cluster.startAll();

    for (const [name, replicas] of cluster.replicas) {
      for (const replica of replicas) expect({ name, exitCode: replica.process.child.exitCode }).toEqual({ name, exitCode: null });
      const applied = await cluster.query<{ name: string; times: number }>(name, 'SELECT name, COUNT(*) AS times FROM migrations GROUP BY name');
      expect(applied.length).toBeGreaterThan(0);
      for (const migration of applied)
        expect({ service: name, migration: migration.name, times: Number(migration.times) }).toEqual({ service: name, migration: migration.name, times: 1 });
    }
  });

  it('counts 500 purchases spread over both replicas exactly once, with a payment, an order and an analytics replica killed midway', async () => {
    const admin = await waitFor(
      async () => {
        const res = await onReplica(cluster, 'auth', (url) =>
          request(url)
            .post('/auth/login')
            .send({ ...cluster.admin, deviceId: 'admin' }),
        );
        return res.status === 200 ? `Bearer ${res.body.accessToken as string}` : undefined;
      },
      { what: 'the bootstrap admin to log in', timeoutMs: 60_000, intervalMs: 250 },
    );
    const { authorId, categoryId, publisherId } = await catalogueReferences({ urls: { book: cluster.all('book')[0].url } }, admin);
    const books: { id: string; price: number }[] = [];
    for (const price of [12.5, 20, 7.25, 33]) {
      const res = await onReplica(cluster, 'book', (url) =>
        request(url)
          .post('/api/books/create')
          .set('Authorization', admin)
          .send({
            isbn: nextIsbn13(),
            title: `Replicated ${price}`,
            authorIds: [authorId],
            categoryId,
            publisherId,
            description: 'Sold by two replicas',
            price,
            language: 'en',
            publishedDate: '2001-01-01',
            stock: 100000,
          }),
      );
      expect(res.status).toBe(201);
      books.push({ id: res.body.id as string, price });
    }
    const buyers: string[] = [];
    for (let i = 0; i < BUYERS; i += 1) {
      const body = newUser();
      const registered = await onReplica(cluster, 'auth', (url) => request(url).post('/auth/register').send(body));
      expect(registered.status).toBe(200);
      const loggedIn = await onReplica(cluster, 'auth', (url) => request(url).post('/auth/login').send({ email: body.email, password: body.password, deviceId: 'buyer' }));
      expect(loggedIn.status).toBe(200);
      buyers.push(`Bearer ${loggedIn.body.accessToken as string}`);
    }

    let revenueCents = 0;
    let booksSold = 0;
    let done = 0;
    let killing: Promise<void> | undefined;
    const purchase = async (i: number) => {
      const book = books[i % books.length];
      const quantity = 1 + (i % 3);
      const checkoutId = randomUUID();
      const res = await onReplica(cluster, 'payment', (url) =>
        request(url)
          .post('/api/payments/checkout')
          .set('Authorization', buyers[i % BUYERS])
          .send({ checkoutId, items: [{ bookId: book.id, quantity }] }),
      );
      // The envelope too when it is not 200: which dependency answered what.
      expect({ status: res.status, body: res.status === 200 ? undefined : res.body }).toEqual({ status: 200, body: undefined });
      await cluster.stripe.confirm(res.body.paymentIntentId as string);
      revenueCents += Math.round(book.price * 100) * quantity;
      booksSold += quantity;
      done += 1;
      if (done === PURCHASES / 2) {
        killing = (async () => {
          for (const service of ['payment', 'order', 'analytics'] as const) await cluster.kill(cluster.all(service)[1]);
        })();
      }
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        for (let i = next++; i < PURCHASES; i = next++) await purchase(i);
      }),
    );
    await killing;
    expect(cluster.all('payment')[1].killed && cluster.all('order')[1].killed && cluster.all('analytics')[1].killed).toBe(true);

    const count = async (service: ServiceName, sql: string) => Number((await cluster.query<{ n: number }>(service, sql))[0].n);
    // A wait that times out says where the topics it depends on stand.
    const explained = async <T>(waiting: Promise<T>, topics: { topic: string; groupId?: string }[]): Promise<T> => {
      try {
        return await waiting;
      } catch (error) {
        const outboxes = { payment: await count('payment', 'SELECT COUNT(*) AS n FROM outbox_events'), order: await count('order', 'SELECT COUNT(*) AS n FROM outbox_events') };
        const consumers = `consumers replaced: ${JSON.stringify(cluster.stalls)}\nconsumer trouble: ${JSON.stringify(cluster.trouble.slice(-5))}`;
        throw new Error(`${(error as Error).message}\noutbox rows: ${JSON.stringify(outboxes)}\n${consumers}\n${await cluster.explain(topics)}`);
      }
    };
    await explained(
      waitFor(() => count('order', 'SELECT COUNT(*) AS n FROM orders'), {
        what: `${PURCHASES} orders`,
        accept: (orders) => orders === PURCHASES,
        timeoutMs: 180_000,
        intervalMs: 500,
      }),
      [{ topic: TOPICS.paymentSuccess, groupId: `order-service.${TOPICS.paymentSuccess}` }],
    );
    const dashboard = await explained(
      waitFor(
        async () => {
          const res = await request(cluster.gateway!.url).get('/analytics/dashboard').set('Authorization', admin);
          // Both counts: a killed relay's unfinished Kafka transaction hides the messages behind it on
          // its partition from read-committed readers until the broker aborts it (10 s), so the two
          // topics may complete at different moments.
          return { status: res.status, body: res.body as { paidOrders?: number; totalOrders?: number } };
        },
        {
          what: `${PURCHASES} checkouts and ${PURCHASES} paid orders in analytics`,
          accept: ({ status, body }) => status === 200 && body.paidOrders === PURCHASES && body.totalOrders === PURCHASES,
          timeoutMs: 180_000,
          intervalMs: 500,
        },
      ),
      [
        { topic: TOPICS.paymentCreated, groupId: 'analytics-service' },
        { topic: TOPICS.paymentSuccess, groupId: 'analytics-service' },
      ],
    );
    expect(dashboard.body).toMatchObject({ paidOrders: PURCHASES, totalRevenue: revenueCents / 100, booksSold });
    expect(await count('order', 'SELECT COUNT(*) AS n FROM orders')).toBe(PURCHASES);

    await waitFor(async () => (await count('payment', 'SELECT COUNT(*) AS n FROM outbox_events')) + (await count('order', 'SELECT COUNT(*) AS n FROM outbox_events')) === 0, {
      what: 'the outboxes to empty',
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    const published = await explained(cluster.publishedOn([TOPICS.paymentCreated, TOPICS.paymentSuccess, TOPICS.orderCreated], PURCHASES), [
      { topic: TOPICS.paymentCreated },
      { topic: TOPICS.paymentSuccess },
      { topic: TOPICS.orderCreated },
    ]);
    const killedPids = new Set((['payment', 'order'] as const).map((service) => cluster.all(service)[1].process.child.pid));
    const consumed = await explained(
      waitFor(
        async () => {
          const counts = {
            order: await count('order', "SELECT COUNT(*) AS n FROM processed_events WHERE consumer = 'order-service'"),
            payment: await count('payment', "SELECT COUNT(*) AS n FROM processed_events WHERE consumer = 'payment-service'"),
            analytics: await count('analytics', "SELECT COUNT(*) AS n FROM processed_events WHERE consumer = 'analytics-service'"),
          };
          return counts;
        },
        { what: 'the payment service to record every order-created', accept: (counts) => counts.payment === PURCHASES, timeoutMs: 120_000, intervalMs: 500 },
      ),
      [{ topic: TOPICS.orderCreated, groupId: `payment-service.${TOPICS.orderCreated}` }],
    );
    const perTopic = Object.fromEntries(Object.entries(published).map(([topic, p]) => [topic, { messages: p.messages, events: p.events, twice: p.twice.length }]));
    process.stdout.write(
      `replica suite figures: ${JSON.stringify({ purchases: done, orders: PURCHASES, dashboard: dashboard.body, published: perTopic, consumed, consumerTrouble: cluster.trouble.length, consumersReplaced: cluster.stalls })}\n`,
    );

    // Every event on its topic, and no two live relays published one row. The one exception the
    // outbox allows: a batch Kafka committed just as its relay was SIGKILLed, before the relay's own
    // commit; another relay publishes it again. Its first copy then comes from a killed replica.
    for (const topic of [TOPICS.paymentCreated, TOPICS.paymentSuccess, TOPICS.orderCreated]) {
      expect({ topic, events: published[topic].events }).toEqual({ topic, events: PURCHASES });
      expect({ topic, messages: published[topic].messages }).toEqual({ topic, messages: PURCHASES + published[topic].twice.length });
      for (const { eventId, publishers } of published[topic].twice) {
        expect({ eventId, copies: publishers.length, firstByAKilledReplica: killedPids.has(publishers[0]) }).toEqual({ eventId, copies: 2, firstByAKilledReplica: true });
      }
    }
    // payment-success applied by orders; payment-created and payment-success by analytics; order-created by payments.
    expect(consumed).toEqual({ order: PURCHASES, payment: PURCHASES, analytics: 2 * PURCHASES });
    expect(cluster.trouble).toEqual([]);
  });

  it('lets 60 wrong logins spread over both auth replicas through as far as one limit allows', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 60; i += 1) {
      const replica = cluster.all('auth')[i % 2];
      const res = await request(replica.url)
        .post('/auth/login')
        // As the gateway forwards a client: its X-Forwarded-For with its proof.
        .set('X-Forwarded-For', '198.51.100.23')
        .set('X-Gateway-Proof', gatewayProof(cluster.config.internalApiKey))
        .send({ email: `nobody-${i}@example.com`, password: 'Wrong12345', deviceId: 'guesser' });
      statuses.push(res.status);
    }
    // AUTH_RATE_LIMIT_MAX=20: the first 20 attempts are judged (and refused), the other 40 are throttled.
    expect(statuses).toEqual([...Array<number>(20).fill(401), ...Array<number>(40).fill(429)]);
  });
});
