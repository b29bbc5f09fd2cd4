import { createHmac, randomUUID } from 'node:crypto';
import request from 'supertest';
import { TOPICS, type PaymentFailedEvent } from '../../../platform/events/topics';
import type { Database } from '../../../platform/database';
import { paymentSuccessEvent, testLogger } from '../../../test/event-fixtures';
import { TIMESTAMP, UUID, expectEnvelope, registeredUser, stackSuite, waitFor, StackSuite } from '../../../test/harness';
import { createBook } from '../../../test/commerce';
import { startReceiver, type Receiver } from '../../../test/webhook-receiver';
import { Dispatcher } from './dispatcher';
import { WebhookDelivery, WebhookEndpoint } from './entities';
import { newDelivery } from './events';
import { verifyWebhookSignature } from './signature';

let receiver: Receiver;
const suite = stackSuite(
  new StackSuite(),
  { services: ['book', 'order'], env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOKS_RETRY_BASE_MS: '20', WEBHOOKS_POLL_MS: '20' } },
  async () => {
    receiver = await startReceiver();
  },
);
afterAll(async () => receiver?.close());

const api = () => request(suite.stack.urls.order);
const admin = () => suite.admin.bearer;

interface Delivery {
  id: string;
  eventId: string;
  type: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  responseExcerpt: string | null;
  payload: { id: string; type: string; data: Record<string, unknown> };
  attemptLog: { number: number; statusCode: number | null; error: string | null; responseExcerpt: string | null }[];
}

async function createEndpoint(path: string, events: string[]): Promise<{ id: string; secret: string }> {
  const res = await api()
    .post('/api/webhooks/endpoints')
    .set('Authorization', admin())
    .send({ url: receiver.url(path), events, description: path });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

async function deliveries(endpointId: string): Promise<Delivery[]> {
  const res = await api().get(`/api/webhooks/endpoints/${endpointId}/deliveries`).set('Authorization', admin());
  expect(res.status).toBe(200);
  return res.body as Delivery[];
}

function deliveryWhen(endpointId: string, predicate: (delivery: Delivery) => boolean, what: string): Promise<Delivery> {
  return waitFor(async () => (await deliveries(endpointId)).find(predicate), { what });
}

async function publish(topic: string, event: { paymentId: string; eventId: string }): Promise<void> {
  await suite.stack.bus.publish([{ topic, key: event.paymentId, value: JSON.stringify(event) }]);
}

function paymentFailed(userId: string, paymentId: string = randomUUID()): PaymentFailedEvent {
  return {
    eventId: randomUUID(),
    type: 'PaymentFailedEvent',
    occurredAt: new Date().toISOString(),
    paymentId,
    checkoutId: randomUUID(),
    userId,
    amount: 12.5,
    transactionId: 'pi_failed',
    reason: 'card_declined',
  };
}

describe('managing endpoints', () => {
  it('creates an endpoint and shows its secret only in that answer', async () => {
    const res = await api()
      .post('/api/webhooks/endpoints')
      .set('Authorization', admin())
      .send({ url: receiver.url('/managed'), events: ['order.created'], description: 'ERP' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(UUID),
      url: receiver.url('/managed'),
      events: ['order.created'],
      description: 'ERP',
      enabled: true,
      createdAt: expect.stringMatching(TIMESTAMP),
    });
    expect(res.body.secret).toMatch(/^whsec_[0-9a-f]{64}$/);

    const read = await api().get(`/api/webhooks/endpoints/${res.body.id}`).set('Authorization', admin());
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('secret');
    const list = await api().get('/api/webhooks/endpoints').set('Authorization', admin());
    expect(list.body.find((e: { id: string }) => e.id === res.body.id)).toEqual(read.body);

    const updated = await api()
      .put(`/api/webhooks/endpoints/${res.body.id}`)
      .set('Authorization', admin())
      .send({ events: ['order.*'], enabled: false });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ events: ['order.*'], enabled: false, description: 'ERP' });

    expect((await api().delete(`/api/webhooks/endpoints/${res.body.id}`).set('Authorization', admin())).status).toBe(204);
    expectEnvelope(await api().get(`/api/webhooks/endpoints/${res.body.id}`).set('Authorization', admin()), 404, `Webhook endpoint not found: ${res.body.id}`);
  });

  it('refuses an unknown event type and a URL that is not http(s) with 400', async () => {
    const unknown = await api()
      .post('/api/webhooks/endpoints')
      .set('Authorization', admin())
      .send({ url: receiver.url('/x'), events: ['order.shipped'] });
    expectEnvelope(unknown, 400);
    expect(unknown.body.validationErrors[0]).toMatch(/^events: each must be one of/);
    const ftp = await api()
      .post('/api/webhooks/endpoints')
      .set('Authorization', admin())
      .send({ url: 'ftp://example.com/x', events: ['*'] });
    expectEnvelope(ftp, 400, 'Webhook URL refused: must be an http or https URL');
  });

  it('is for admins only: 401 without a token, 403 for a customer', async () => {
    const customer = await registeredUser(suite.stack);
    expectEnvelope(await api().get('/api/webhooks/endpoints'), 401);
    expectEnvelope(await api().get('/api/webhooks/endpoints').set('Authorization', customer.bearer), 403);
    expectEnvelope(
      await api()
        .post('/api/webhooks/endpoints')
        .set('Authorization', customer.bearer)
        .send({ url: receiver.url('/c'), events: ['*'] }),
      403,
    );
    expectEnvelope(await api().post(`/api/webhooks/deliveries/${randomUUID()}/resend`).set('Authorization', customer.bearer), 403);
  });
});

describe('deliveries', () => {
  it('signs each delivery so that our helper and a hand-made HMAC both verify it', async () => {
    const endpoint = await createEndpoint('/signed', ['payment.succeeded']);
    const buyer = await registeredUser(suite.stack);
    const event = paymentSuccessEvent(buyer.userId);
    await publish(TOPICS.paymentSuccess, event);

    const delivery = await deliveryWhen(endpoint.id, (d) => d.status === 'SUCCEEDED', 'the payment.succeeded delivery');
    expect(delivery).toMatchObject({ eventId: event.eventId, type: 'payment.succeeded', attempts: 1, lastStatusCode: 200, responseExcerpt: 'answered 200' });
    const [received] = receiver.received('/signed');
    expect(received.json).toEqual({
      id: event.eventId,
      type: 'payment.succeeded',
      createdAt: event.occurredAt,
      data: expect.objectContaining({ paymentId: event.paymentId, amount: 60.07 }),
    });
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.headers['bookstore-event-id']).toBe(event.eventId);

    const header = String(received.headers['bookstore-signature']);
    expect(verifyWebhookSignature(received.body, header, endpoint.secret, 300)).toBe(true);
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) ?? [];
    expect(createHmac('sha256', endpoint.secret).update(`${t}.${received.body}`).digest('hex')).toBe(v1);
    expect(verifyWebhookSignature(received.body, header, 'whsec_another', 300)).toBe(false);
    expect(verifyWebhookSignature(received.body.replace('60.07', '6.07'), header, endpoint.secret, 300)).toBe(false);
  });

  it('sends order.* the order events and none of the payment ones; * gets both', async () => {
    const orders = await createEndpoint('/orders-only', ['order.*']);
    const everything = await createEndpoint('/everything', ['*']);
    const buyer = await registeredUser(suite.stack);
    const event = paymentSuccessEvent(buyer.userId);
    await publish(TOPICS.paymentSuccess, event);

    const created = await deliveryWhen(orders.id, (d) => d.payload.data.paymentId === event.paymentId, 'order.created to the order.* endpoint');
    expect(created).toMatchObject({ type: 'order.created', status: expect.stringMatching(/PENDING|SUCCEEDED/) });
    await deliveryWhen(everything.id, (d) => d.type === 'payment.succeeded' && d.eventId === event.eventId, 'payment.succeeded to the * endpoint');
    await deliveryWhen(everything.id, (d) => d.type === 'order.created' && d.payload.data.paymentId === event.paymentId, 'order.created to the * endpoint');

    const orderId = String(created.payload.data.orderId);
    const moved = await request(suite.stack.urls.order).put(`/api/orders/${orderId}/status?status=PROCESSING`).set('Authorization', admin());
    expect(moved.status).toBe(200);
    const changed = await deliveryWhen(orders.id, (d) => d.type === 'order.status_changed' && d.payload.data.orderId === orderId, 'order.status_changed');
    expect(changed.payload.data).toMatchObject({ previousStatus: 'CONFIRMED', status: 'PROCESSING' });
    expect((await deliveries(orders.id)).filter((d) => d.type.startsWith('payment.'))).toEqual([]);
    await api().put(`/api/webhooks/endpoints/${everything.id}`).set('Authorization', admin()).send({ enabled: false });
  });

  it('retries a receiver that fails, then succeeds once it recovers, with every attempt in the log', async () => {
    receiver.script('/flaky', [500, 502, 200]);
    const endpoint = await createEndpoint('/flaky', ['payment.failed']);
    const buyer = await registeredUser(suite.stack);
    await publish(TOPICS.paymentFailed, paymentFailed(buyer.userId));

    const delivery = await deliveryWhen(endpoint.id, (d) => d.status === 'SUCCEEDED', 'the flaky delivery to succeed');
    expect(delivery.attempts).toBe(3);
    expect(delivery.attemptLog.map((a) => [a.number, a.statusCode, a.error])).toEqual([
      [1, 500, 'answered HTTP 500'],
      [2, 502, 'answered HTTP 502'],
      [3, 200, null],
    ]);
    expect(delivery.attemptLog[0].responseExcerpt).toBe('answered 500');
    expect(receiver.received('/flaky')).toHaveLength(3);
    expect(new Set(receiver.received('/flaky').map((r) => r.headers['bookstore-event-id'])).size).toBe(1);
    const read = await api().get(`/api/webhooks/endpoints/${endpoint.id}`).set('Authorization', admin());
    expect(read.body.failingSince).toBeNull();
  });

  it('gives up after 5 retries (FAILED, 6 attempts), and a resend makes one attempt more', async () => {
    receiver.script('/down', [503], { body: 'x'.repeat(3000) });
    const endpoint = await createEndpoint('/down', ['payment.failed']);
    const buyer = await registeredUser(suite.stack);
    await publish(TOPICS.paymentFailed, paymentFailed(buyer.userId));

    const failed = await deliveryWhen(endpoint.id, (d) => d.status === 'FAILED', 'the delivery to fail for good');
    expect(failed).toMatchObject({ attempts: 6, lastStatusCode: 503, lastError: 'answered HTTP 503' });
    expect(failed.responseExcerpt).toHaveLength(1024);
    expect(failed.attemptLog.map((a) => a.number)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(receiver.received('/down')).toHaveLength(6);

    receiver.script('/down', [204]);
    const resent = await api().post(`/api/webhooks/deliveries/${failed.id}/resend`).set('Authorization', admin());
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ id: failed.id, eventId: failed.eventId, status: 'SUCCEEDED', attempts: 7, lastStatusCode: 204 });
    expect(receiver.received('/down')[6].body).toBe(receiver.received('/down')[0].body);
    expectEnvelope(await api().post(`/api/webhooks/deliveries/${randomUUID()}/resend`).set('Authorization', admin()), 404);
  });

  it('sends a test ping now and answers its delivery', async () => {
    const endpoint = await createEndpoint('/ping', ['book.stock_low']);
    const res = await api().post(`/api/webhooks/endpoints/${endpoint.id}/test`).set('Authorization', admin());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'webhook.test', status: 'SUCCEEDED', attempts: 1, lastStatusCode: 200 });
    const [received] = receiver.received('/ping');
    expect(received.json).toMatchObject({ id: res.body.eventId, type: 'webhook.test', data: { endpointId: endpoint.id } });
    expect(verifyWebhookSignature(received.body, String(received.headers['bookstore-signature']), endpoint.secret, 300)).toBe(true);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    receiver.script('/moved', [302], { location: receiver.url('/moved-here') });
    const endpoint = await createEndpoint('/moved', ['book.stock_low']);
    const res = await api().post(`/api/webhooks/endpoints/${endpoint.id}/test`).set('Authorization', admin());
    expect(res.body).toMatchObject({ status: 'FAILED', lastStatusCode: 302, lastError: 'answered HTTP 302' });
    expect(receiver.received('/moved-here')).toEqual([]);
  });

  it('signs with both secrets while a rotated-out secret overlaps', async () => {
    const endpoint = await createEndpoint('/rotated', ['book.stock_low']);
    const rotated = await api().post(`/api/webhooks/endpoints/${endpoint.id}/rotate-secret`).set('Authorization', admin()).send({ overlapSeconds: 600 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(rotated.body.previousSecretExpiresAt).toMatch(TIMESTAMP);

    await api().post(`/api/webhooks/endpoints/${endpoint.id}/test`).set('Authorization', admin());
    const [received] = receiver.received('/rotated');
    const header = String(received.headers['bookstore-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(received.body, header, rotated.body.secret, 300)).toBe(true);
    expect(verifyWebhookSignature(received.body, header, endpoint.secret, 300)).toBe(true);
  });

  it('keeps signing with every rotated-out secret until its own overlap ends, through a second rotation within the first overlap', async () => {
    const endpoint = await createEndpoint('/rotated-twice', ['book.stock_low']);
    const rotate = (overlapSeconds: number) => api().post(`/api/webhooks/endpoints/${endpoint.id}/rotate-secret`).set('Authorization', admin()).send({ overlapSeconds });
    const first = await rotate(3600);
    expect(first.status).toBe(200);
    const second = await rotate(600);
    expect(second.status).toBe(200);
    // The original secret's overlap (an hour) outlasts the first rotated-out secret's (ten minutes).
    const originalEnds = Date.parse(`${first.body.previousSecretExpiresAt as string}Z`);
    expect(second.body.previousSecretExpiresAt).toBe(first.body.previousSecretExpiresAt);
    expect(originalEnds).toBeGreaterThan(Date.now() + 3000 * 1000);

    await api().post(`/api/webhooks/endpoints/${endpoint.id}/test`).set('Authorization', admin());
    const [received] = receiver.received('/rotated-twice');
    const header = String(received.headers['bookstore-signature']);
    expect(header).toMatch(/^t=\d+(,v1=[0-9a-f]{64}){3}$/);
    for (const secret of [second.body.secret as string, first.body.secret as string, endpoint.secret])
      expect(verifyWebhookSignature(received.body, header, secret, 300)).toBe(true);

    // A rotation with no overlap ends the secret it replaces at once; the earlier ones keep theirs.
    const third = await rotate(0);
    expect(third.status).toBe(200);
    await api().post(`/api/webhooks/endpoints/${endpoint.id}/test`).set('Authorization', admin());
    const [, again] = receiver.received('/rotated-twice');
    const signed = String(again.headers['bookstore-signature']);
    const signs = (secret: string) => verifyWebhookSignature(again.body, signed, secret, 300);
    expect([third.body.secret, second.body.secret, first.body.secret, endpoint.secret].map((secret) => signs(secret as string))).toEqual([true, false, true, true]);
  });

  it('keeps both secrets of two rotations made at once: the one not current signs beside it', async () => {
    const endpoint = await createEndpoint('/rotated-at-once', ['book.stock_low']);
    const rotate = () => api().post(`/api/webhooks/endpoints/${endpoint.id}/rotate-secret`).set('Authorization', admin()).send({ overlapSeconds: 600 });
    const answers = await Promise.all([rotate(), rotate()]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    await api().post(`/api/webhooks/endpoints/${endpoint.id}/test`).set('Authorization', admin());
    const [received] = receiver.received('/rotated-at-once');
    const header = String(received.headers['bookstore-signature']);
    for (const secret of [endpoint.secret, ...answers.map((answer) => answer.body.secret as string)]) expect(verifyWebhookSignature(received.body, header, secret, 300)).toBe(true);
  });

  it('answers 409 to a rotation that would overlap more than five earlier secrets, and rotates with no overlap', async () => {
    const endpoint = await createEndpoint('/rotated-often', ['book.stock_low']);
    const rotate = (overlapSeconds: number) => api().post(`/api/webhooks/endpoints/${endpoint.id}/rotate-secret`).set('Authorization', admin()).send({ overlapSeconds });
    for (let i = 0; i < 5; i += 1) expect((await rotate(600)).status).toBe(200);
    const refused = await rotate(600);
    expectEnvelope(refused, 409, /^Webhook endpoint .* already signs with 5 earlier secrets/);
    const immediate = await rotate(0);
    expect(immediate.status).toBe(200);
    await api().post(`/api/webhooks/endpoints/${endpoint.id}/test`).set('Authorization', admin());
    const [received] = receiver.received('/rotated-often');
    expect(String(received.headers['bookstore-signature'])).toMatch(/^t=\d+(,v1=[0-9a-f]{64}){6}$/);
    expect(verifyWebhookSignature(received.body, String(received.headers['bookstore-signature']), immediate.body.secret as string, 300)).toBe(true);
  });

  it('makes one delivery per endpoint of an event the bus delivers twice', async () => {
    const endpoint = await createEndpoint('/once', ['payment.failed']);
    const buyer = await registeredUser(suite.stack);
    const event = paymentFailed(buyer.userId);
    await publish(TOPICS.paymentFailed, event);
    await publish(TOPICS.paymentFailed, event);
    // The same key keeps order on Kafka too: once the later event is delivered, both copies were consumed.
    const later = paymentFailed(buyer.userId, event.paymentId);
    await publish(TOPICS.paymentFailed, later);
    await deliveryWhen(endpoint.id, (d) => d.eventId === later.eventId && d.status === 'SUCCEEDED', 'the later event');
    expect((await deliveries(endpoint.id)).filter((d) => d.eventId === event.eventId)).toHaveLength(1);
  });

  it('sends book.stock_low when a sale takes a book to the threshold', async () => {
    const endpoint = await createEndpoint('/stock', ['book.*']);
    const book = await createBook(suite.stack, admin(), 'Few Copies Left', 10, 6);
    const buyer = await registeredUser(suite.stack);
    await publish(TOPICS.paymentSuccess, paymentSuccessEvent(buyer.userId, { amount: 20, items: [{ bookId: book.id, bookTitle: book.title, quantity: 2, price: 10 }] }));
    const delivery = await deliveryWhen(endpoint.id, (d) => d.type === 'book.stock_low', 'book.stock_low');
    expect(delivery.payload.data).toEqual({ bookId: book.id, title: 'Few Copies Left', stock: 4, threshold: 5 });
  });
});

describe('book.stock_low from an adjustment', () => {
  it('is sent when an admin lowers the stock to the threshold, and not again while it stays below', async () => {
    const endpoint = await createEndpoint('/adjusted', ['book.stock_low']);
    const book = await createBook(suite.stack, admin(), 'Shelf Count', 10, 20);
    const { id: _id, coverImageUrl: _c, createdAt: _a, updatedAt: _u, ...fields } = (await request(suite.stack.urls.book).get(`/api/books/${book.id}`)).body;
    const setStock = async (stock: number) => {
      const res = await request(suite.stack.urls.book)
        .put(`/api/books/update/${book.id}`)
        .set('Authorization', admin())
        .send({ ...fields, stock });
      expect(res.status).toBe(200);
    };
    await setStock(5);
    await setStock(2);
    await setStock(9);
    await setStock(1);
    await waitFor(async () => (await deliveries(endpoint.id)).filter((d) => d.status === 'SUCCEEDED').length === 2, { what: 'two stock_low deliveries' });
    expect((await deliveries(endpoint.id)).map((d) => d.payload.data.stock).sort()).toEqual([1, 5]);
  });
});

describe('two dispatchers (two replicas of the service)', () => {
  it('let only one of them claim an attempt at a delivery', async () => {
    const db = suite.stack.services.order?.db as Database;
    const endpoint = await createEndpoint('/claimed', ['book.stock_low']);
    // FAILED, so the service's own dispatcher leaves it alone; a claim as a resend makes takes any free delivery.
    const delivery = Object.assign(newDelivery(endpoint.id, randomUUID(), 'book.stock_low', '{}', new Date()), { status: 'FAILED' as const, nextAttemptAt: null });
    await db.transaction((manager) => manager.insert(WebhookDelivery, delivery));
    const replicas = [new Dispatcher(db, testLogger, suite.stack.config.webhooks), new Dispatcher(db, testLogger, suite.stack.config.webhooks)];
    const claims = await Promise.all([...replicas, ...replicas].map((replica) => replica.claim(delivery.id, false)));
    expect(claims.filter((claim) => claim !== undefined)).toHaveLength(1);
  });
});

describe('an endpoint that keeps failing', () => {
  it('is disabled, with the reason shown, once every delivery failed for the configured window', async () => {
    receiver.script('/dead', [500]);
    const endpoint = await createEndpoint('/dead', ['book.stock_low']);
    const first = await api().post(`/api/webhooks/endpoints/${endpoint.id}/test`).set('Authorization', admin());
    expect(first.body.status).toBe('FAILED');
    let read = await api().get(`/api/webhooks/endpoints/${endpoint.id}`).set('Authorization', admin());
    expect(read.body).toMatchObject({ enabled: true, failingSince: expect.stringMatching(TIMESTAMP) });

    // A day of failures: the streak began 25 hours ago.
    const db = suite.stack.services.order?.db;
    await db?.transaction((manager) => manager.update(WebhookEndpoint, { id: endpoint.id }, { failingSince: new Date(Date.now() - 25 * 3600_000) }));
    await api().post(`/api/webhooks/endpoints/${endpoint.id}/test`).set('Authorization', admin());

    read = await api().get(`/api/webhooks/endpoints/${endpoint.id}`).set('Authorization', admin());
    expect(read.body).toMatchObject({
      enabled: false,
      disabledAt: expect.stringMatching(TIMESTAMP),
      disabledReason: expect.stringMatching(/^Every delivery failed since .+; last: answered HTTP 500$/),
    });

    const enabled = await api().put(`/api/webhooks/endpoints/${endpoint.id}`).set('Authorization', admin()).send({ enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, disabledAt: null, disabledReason: null, failingSince: null });
  });
});
