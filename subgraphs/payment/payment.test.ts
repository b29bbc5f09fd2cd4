import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ConsumedMessage, Subscription } from '../../platform/events/bus';
import { TOPICS } from '../../platform/events/topics';
import { checkout, createBook, paymentWhen, sendSignedWebhook, type CatalogueBook } from '../../test/commerce';
import { adminSession, expectEnvelope, registeredUser, startStack, waitFor, WEBHOOK_SECRET, type Stack } from '../../test/harness';
import { signatureHeader } from '../../simulators/stripe/simulator';

let stack: Stack;
let observer: Subscription;
const published: ConsumedMessage[] = [];
let novel: CatalogueBook;
let bookmark: CatalogueBook;

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment'] });
  observer = await stack.bus.subscribe({
    groupId: `observer-${randomUUID()}`,
    topics: [TOPICS.paymentCreated, TOPICS.paymentSuccess, TOPICS.paymentFailed, TOPICS.paymentRefunded],
    handle: async (message) => void published.push(message),
  });
  const admin = await adminSession(stack);
  novel = await createBook(stack, admin.bearer, 'Middlemarch', 19.99);
  bookmark = await createBook(stack, admin.bearer, 'Bookmark', 0.1);
}, 60_000);
afterAll(async () => {
  await observer?.stop();
  await stack?.stop();
});

const payments = () => request(stack.urls.payment);
const sim = () => stack.stripe!;
/** The simulator's PaymentIntents made for one checkout. */
const intentsOf = (checkoutId: string) =>
  sim()
    .intents()
    .filter((i) => i.metadata.checkoutId === checkoutId);
const eventsOf = (topic: string, paymentId: string) => published.filter((m) => m.topic === topic && JSON.parse(m.value).paymentId === paymentId);

describe('the purchase flow', () => {
  it('goes from checkout to a paid payment with its order', async () => {
    const buyer = await registeredUser(stack);
    const res = await checkout(stack, buyer.bearer, [
      { bookId: novel.id, quantity: 3 },
      { bookId: bookmark.id, quantity: 1 },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      paymentId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      checkoutId: expect.any(String),
      orderId: null,
      amount: 60.07,
      status: 'PAYMENT_PENDING',
      paymentIntentId: expect.stringMatching(/^pi_/),
      clientSecret: expect.stringMatching(/^pi_.+_secret_.+/),
      items: [
        { bookId: novel.id, bookTitle: 'Middlemarch', quantity: 3, price: 19.99 },
        { bookId: bookmark.id, bookTitle: 'Bookmark', quantity: 1, price: 0.1 },
      ],
      refundedAmount: 0,
      refunds: [],
      failureReason: null,
      holdExpiresAt: null,
    });
    const intent = sim()
      .intents()
      .find((i) => i.id === res.body.paymentIntentId)!;
    expect(intent.amount).toBe(6007);
    expect(intent.currency).toBe('usd');
    expect(intent.metadata).toEqual({ checkoutId: res.body.checkoutId, paymentId: res.body.paymentId, userId: buyer.userId });

    const confirmation = await sim().confirm(res.body.paymentIntentId);
    expect(confirmation.event.status).toBe('delivered');
    const paid = await paymentWhen(stack, buyer.bearer, res.body.paymentId, (p) => p.status === 'SUCCESS' && p.orderId !== null, 'SUCCESS with its orderId');
    const order = await request(stack.urls.order).get(`/api/orders/payment/${res.body.paymentId}`).set('Authorization', buyer.bearer);
    expect(order.status).toBe(200);
    expect(order.body).toMatchObject({ orderId: paid.orderId, paymentId: res.body.paymentId, userId: buyer.userId, totalAmount: 60.07, status: 'CONFIRMED' });

    await waitFor(() => eventsOf(TOPICS.paymentSuccess, res.body.paymentId).length === 1, { what: 'payment-success' });
    expect(eventsOf(TOPICS.paymentCreated, res.body.paymentId)).toHaveLength(1);
    expect(JSON.parse(eventsOf(TOPICS.paymentSuccess, res.body.paymentId)[0].value)).toMatchObject({
      type: 'PaymentSuccessEvent',
      transactionId: res.body.paymentIntentId,
      amount: 60.07,
      email: buyer.email,
      firstName: buyer.firstName,
      phoneNumber: buyer.phoneNumber,
    });
    const mine = await payments().get('/api/payments').set('Authorization', buyer.bearer);
    expect(mine.body.map((p: { paymentId: string }) => p.paymentId)).toEqual([res.body.paymentId]);
  });

  it('follows the transition table: failure, then success, gives one order; a refund refunds both', async () => {
    const buyer = await registeredUser(stack);
    const { body: payment } = await checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 1 }]);
    const failure = await sim().fail(payment.paymentIntentId, 'card_declined');
    await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.status === 'FAILED', 'FAILED');
    const success = await sim().confirm(payment.paymentIntentId);
    const paid = await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.status === 'SUCCESS' && p.orderId !== null, 'SUCCESS after FAILED');
    // The same success delivered twice more changes nothing.
    await sim().resend(success.event.event.id);
    await sim().resend(success.event.event.id);
    await waitFor(() => eventsOf(TOPICS.paymentFailed, payment.paymentId).length === 1, { what: 'payment-failed' });
    expect(JSON.parse(eventsOf(TOPICS.paymentFailed, payment.paymentId)[0].value).reason).toBe('card_declined');
    expect(eventsOf(TOPICS.paymentSuccess, payment.paymentId)).toHaveLength(1);
    expect((await request(stack.urls.order).get('/api/orders/me').set('Authorization', buyer.bearer)).body).toHaveLength(1);

    // A failure after success is not in the table: it is acknowledged and changes nothing. The
    // simulator refuses to fail a succeeded PaymentIntent, so a new failure event is signed here.
    const lateFailure = JSON.stringify({ ...failure.event.event, id: `evt_${randomUUID()}`, created: Math.floor(Date.now() / 1000) });
    const acknowledged = await sendSignedWebhook(stack, lateFailure);
    expect(acknowledged.status).toBe(200);
    expect(acknowledged.text).toBe('Webhook received');
    expect((await payments().get(`/api/payments/${payment.paymentId}`).set('Authorization', buyer.bearer)).body).toEqual(paid);

    await sim().refund(payment.paymentIntentId);
    await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.status === 'REFUNDED', 'REFUNDED');
    await waitFor(async () => (await request(stack.urls.order).get(`/api/orders/payment/${payment.paymentId}`).set('Authorization', buyer.bearer)).body.status === 'REFUNDED', {
      what: 'the order REFUNDED',
    });
    expect((await payments().get(`/api/payments/${payment.paymentId}`).set('Authorization', buyer.bearer)).body.status).toBe('REFUNDED');
    // The outbox publishes in commit order: once the refund is out, a payment-failed of the late failure would be too.
    await waitFor(() => eventsOf(TOPICS.paymentRefunded, payment.paymentId).length === 1, { what: 'payment-refunded' });
    expect(eventsOf(TOPICS.paymentFailed, payment.paymentId)).toHaveLength(1);
    expect(eventsOf(TOPICS.paymentSuccess, payment.paymentId)).toHaveLength(1);
  });
});

describe('checkout idempotency', () => {
  it('gives the same payment back for the same user, checkoutId and cart, with one PaymentIntent', async () => {
    const buyer = await registeredUser(stack);
    const checkoutId = randomUUID();
    const items = [{ bookId: novel.id, quantity: 2 }];
    const first = await checkout(stack, buyer.bearer, items, checkoutId);
    const again = await checkout(stack, buyer.bearer, items, checkoutId);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(intentsOf(checkoutId)).toHaveLength(1);
  });

  it('creates one payment and one PaymentIntent from 50 concurrent identical checkouts', async () => {
    const buyer = await registeredUser(stack);
    const checkoutId = randomUUID();
    const results = await Promise.all(Array.from({ length: 50 }, () => checkout(stack, buyer.bearer, [{ bookId: bookmark.id, quantity: 5 }], checkoutId)));
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(results.map((r) => r.body.paymentId)).size).toBe(1);
    expect(intentsOf(checkoutId)).toHaveLength(1);
    expect((await payments().get('/api/payments').set('Authorization', buyer.bearer)).body).toHaveLength(1);
    await waitFor(() => eventsOf(TOPICS.paymentCreated, results[0].body.paymentId).length === 1, { what: 'payment-created' });
  });

  it('answers 200 with one payment to 20 concurrent identical checkouts while Stripe is slow, with one PaymentIntent', async () => {
    const buyer = await registeredUser(stack);
    const checkoutId = randomUUID();
    // Stripe refuses a request whose Idempotency-Key is still in flight (409). Slower than the SDK's own
    // retry of it (one, after 0.5 s), so every other request is still refused when it retries.
    sim().injectFaults({ delayMs: 1500 });
    let results;
    try {
      results = await Promise.all(Array.from({ length: 20 }, () => checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 1 }], checkoutId)));
    } finally {
      sim().injectFaults({ delayMs: 0 });
    }
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.paymentId)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.paymentIntentId)).size).toBe(1);
    expect(intentsOf(checkoutId)).toHaveLength(1);
    expect((await payments().get('/api/payments').set('Authorization', buyer.bearer)).body).toHaveLength(1);
  });

  it("answers 409 for another user's checkoutId and for a different cart under the same checkoutId", async () => {
    const buyer = await registeredUser(stack);
    const thief = await registeredUser(stack);
    const checkoutId = randomUUID();
    expect((await checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 1 }], checkoutId)).status).toBe(200);
    expectEnvelope(await checkout(stack, thief.bearer, [{ bookId: novel.id, quantity: 1 }], checkoutId), 409);
    expectEnvelope(await checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 2 }], checkoutId), 409);
  });
});

describe('checkout errors', () => {
  let bearer: string;
  beforeAll(async () => {
    bearer = (await registeredUser(stack)).bearer;
  });

  it.each([
    ['empty items', { checkoutId: randomUUID(), items: [] }, 'items: must contain at least one item'],
    ['missing items', { checkoutId: randomUUID() }, 'items: must not be null'],
    ['missing bookId', { checkoutId: randomUUID(), items: [{ quantity: 1 }] }, 'items[0].bookId: must not be null'],
    ['quantity 0', { checkoutId: randomUUID(), items: [{ bookId: randomUUID(), quantity: 0 }] }, 'items[0].quantity: must not be less than 1'],
    ['quantity 2001', { checkoutId: randomUUID(), items: [{ bookId: randomUUID(), quantity: 2001 }] }, 'items[0].quantity: must not be greater than 2000'],
    [
      'a duplicate bookId',
      {
        checkoutId: randomUUID(),
        items: [
          { bookId: 'a6b7c8d9-0000-4000-8000-000000000001', quantity: 1 },
          { bookId: 'A6B7C8D9-0000-4000-8000-000000000001', quantity: 2 },
        ],
      },
      'items: must not list the same bookId twice',
    ],
    ['a missing checkoutId', { items: [{ bookId: randomUUID(), quantity: 1 }] }, 'checkoutId: must not be null'],
  ])('answers 400 for %s', async (_name, body, line) => {
    const res = await payments().post('/api/payments/checkout').set('Authorization', bearer).send(body);
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toContain(line);
  });

  it('answers 404 for an unknown book, saving nothing', async () => {
    const buyer = await registeredUser(stack);
    const unknown = randomUUID();
    const res = await checkout(stack, buyer.bearer, [
      { bookId: novel.id, quantity: 1 },
      { bookId: unknown, quantity: 1 },
    ]);
    expectEnvelope(res, 404, `Book not found: ${unknown}`);
    expect((await payments().get('/api/payments').set('Authorization', buyer.bearer)).body).toEqual([]);
  });

  it('answers 401 without a token', async () => {
    expectEnvelope(await payments().post('/api/payments/checkout').send({ checkoutId: randomUUID(), items: [] }), 401);
  });

  it('answers 502 when Stripe fails, saving nothing visible, and the retry with the same checkoutId succeeds once', async () => {
    const buyer = await registeredUser(stack);
    const checkoutId = randomUUID();
    sim().injectFaults({ failNext: 10, status: 500 });
    try {
      expectEnvelope(await checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 1 }], checkoutId), 502);
    } finally {
      sim().injectFaults({ failNext: 0 });
    }
    expect((await payments().get('/api/payments').set('Authorization', buyer.bearer)).body).toEqual([]);
    const retry = await checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 1 }], checkoutId);
    expect(retry.status).toBe(200);
    expect(intentsOf(checkoutId)).toHaveLength(1);
    expect((await payments().get('/api/payments').set('Authorization', buyer.bearer)).body).toHaveLength(1);
  });

  it('answers 503 when the book service is down, saving nothing', async () => {
    const buyer = await registeredUser(stack);
    const bookUrl = stack.config.urls.book;
    stack.config.urls.book = 'http://127.0.0.1:9';
    try {
      expectEnvelope(await checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 1 }]), 503);
    } finally {
      stack.config.urls.book = bookUrl;
    }
    expect((await payments().get('/api/payments').set('Authorization', buyer.bearer)).body).toEqual([]);
  });
});

describe('reading payments and sync-order', () => {
  it("treats another user's payment as not found", async () => {
    const owner = await registeredUser(stack);
    const other = await registeredUser(stack);
    const { body: payment } = await checkout(stack, owner.bearer, [{ bookId: novel.id, quantity: 1 }]);
    expect((await payments().get(`/api/payments/${payment.paymentId}`).set('Authorization', owner.bearer)).body).toEqual(payment);
    expectEnvelope(await payments().get(`/api/payments/${payment.paymentId}`).set('Authorization', other.bearer), 404, `Payment not found: ${payment.paymentId}`);
    expectEnvelope(await payments().post(`/api/payments/${payment.paymentId}/sync-order`).set('Authorization', other.bearer), 404);
    expectEnvelope(await payments().get('/api/payments/not-a-uuid').set('Authorization', owner.bearer), 400);
  });

  it('sync-order answers 409 while pending, and re-publishes payment-success once paid, with still one order', async () => {
    const buyer = await registeredUser(stack);
    const { body: payment } = await checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 1 }]);
    expectEnvelope(await payments().post(`/api/payments/${payment.paymentId}/sync-order`).set('Authorization', buyer.bearer), 409, 'Payment is not SUCCESS');
    await sim().confirm(payment.paymentIntentId);
    await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.orderId !== null, 'the order');
    const res = await payments().post(`/api/payments/${payment.paymentId}/sync-order`).set('Authorization', buyer.bearer);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe(`payment-success re-published for paymentId=${payment.paymentId}`);
    await waitFor(() => eventsOf(TOPICS.paymentSuccess, payment.paymentId).length === 2, { what: 'the re-published payment-success' });
    expect((await request(stack.urls.order).get('/api/orders/me').set('Authorization', buyer.bearer)).body).toHaveLength(1);
  });
});

describe('POST /api/payments/webhook', () => {
  const payload = JSON.stringify({
    id: `evt_${randomUUID()}`,
    object: 'event',
    type: 'payment_intent.succeeded',
    created: Math.floor(Date.now() / 1000),
    data: { object: { object: 'payment_intent', id: 'pi_unknown' } },
  });
  const send = (body: string, signature?: string) => {
    const req = payments().post('/api/payments/webhook').set('Content-Type', 'application/json');
    return (signature ? req.set('Stripe-Signature', signature) : req).send(body);
  };

  it('answers 400 "Invalid webhook signature" without a signature, with a wrong one, and with a stale one', async () => {
    expectEnvelope(await send(payload), 400, 'Invalid webhook signature');
    expectEnvelope(await send(payload, signatureHeader(payload, 'whsec_wrong')), 400, 'Invalid webhook signature');
    expectEnvelope(await send(payload, signatureHeader(payload, WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 301)), 400, 'Invalid webhook signature');
    expectEnvelope(await send(`${payload} `, signatureHeader(payload, WEBHOOK_SECRET)), 400, 'Invalid webhook signature');
  });

  it('acknowledges a well-signed event about an unknown PaymentIntent', async () => {
    const res = await send(payload, signatureHeader(payload, WEBHOOK_SECRET));
    expect(res.status).toBe(200);
    expect(res.text).toBe('Webhook received');
  });
});
