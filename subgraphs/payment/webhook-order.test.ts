/**
 * Stripe does not promise the order of its events (CONTRACT §5): a full refund may reach the
 * webhook before the success it gives back. The payment follows the provider's facts: it ends
 * REFUNDED, the late success changes nothing, no order is made and analytics counts no revenue.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { In } from 'typeorm';
import type { ConsumedMessage, Subscription } from '../../platform/events/bus';
import { ProcessedEvent, consumerGroupOf } from '../../platform/events/consumer';
import { TOPICS } from '../../platform/events/topics';
import { checkout, createBook, paymentWhen, sendSignedWebhook, type CatalogueBook } from '../../test/commerce';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';
import type { StripeEvent } from '../../simulators/stripe/simulator';

let stack: Stack;
let observer: Subscription;
/** Answers 200 to every webhook, so the simulator records its events as delivered and sends none again. */
let sink: http.Server;
const published: ConsumedMessage[] = [];
let book: CatalogueBook;

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'] });
  observer = await stack.bus.subscribe({
    groupId: `observer-${randomUUID()}`,
    topics: [TOPICS.paymentSuccess, TOPICS.paymentRefunded],
    handle: async (message) => void published.push(message),
  });
  sink = http.createServer((req, res) => req.resume().on('end', () => res.end('ok')));
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const admin = await adminSession(stack);
  book = await createBook(stack, admin.bearer, 'Emma', 10);
}, 60_000);
afterAll(async () => {
  await observer?.stop();
  await stack?.stop();
  await new Promise((resolve) => sink?.close(resolve));
});

const sim = () => stack.stripe!;
const eventsOf = (topic: string, paymentId: string) => published.filter((m) => m.topic === topic && JSON.parse(m.value).paymentId === paymentId);

/** Runs `act` while the simulator's webhooks go to the sink: its events are made but not received. */
async function withheld<T>(act: () => Promise<T>): Promise<T> {
  const paymentUrl = stack.config.urls.payment;
  stack.config.urls.payment = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  try {
    return await act();
  } finally {
    stack.config.urls.payment = paymentUrl;
  }
}

/** Delivers a provider event to the payment service, signed now, as Stripe would (again). */
async function deliver(event: StripeEvent): Promise<void> {
  const res = await sendSignedWebhook(stack, JSON.stringify(event));
  expect(res.status).toBe(200);
  expect(res.text).toBe('Webhook received');
}

/**
 * A payment paid after the ones under test, with its order: the outbox publishes in commit order,
 * so once its payment-success is out, any event of the earlier payments is too.
 */
async function laterPurchase(buyer: { bearer: string }) {
  const { body: payment } = await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 1 }]);
  await sim().confirm(payment.paymentIntentId);
  await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.orderId !== null, 'the later payment with its order');
  await waitFor(() => eventsOf(TOPICS.paymentSuccess, payment.paymentId).length === 1, { what: "the later payment's payment-success" });
  return payment as { paymentId: string };
}

it('leaves a payment refunded before its success REFUNDED, with no order and no revenue', async () => {
  const admin = await adminSession(stack);
  const buyer = await registeredUser(stack);
  const { body: payment } = await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 3 }]);
  const { success, refund } = await withheld(async () => ({
    success: (await sim().confirm(payment.paymentIntentId)).event.event,
    refund: (await sim().refund(payment.paymentIntentId)).event.event,
  }));

  await deliver(refund);
  const refunded = await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.status === 'REFUNDED', 'REFUNDED by the early refund');
  await deliver(success);
  await deliver(success);
  const later = await laterPurchase(buyer);

  expect((await request(stack.urls.payment).get(`/api/payments/${payment.paymentId}`).set('Authorization', buyer.bearer)).body).toEqual(refunded);
  expect(refunded).toMatchObject({ status: 'REFUNDED', orderId: null });
  expect(eventsOf(TOPICS.paymentSuccess, payment.paymentId)).toHaveLength(0);
  expect(eventsOf(TOPICS.paymentRefunded, payment.paymentId).map((m) => JSON.parse(m.value))).toEqual([
    expect.objectContaining({ type: 'PaymentRefundedEvent', userId: buyer.userId, transactionId: payment.paymentIntentId, amount: 30 }),
  ]);
  expect((await request(stack.urls.order).get(`/api/orders/payment/${payment.paymentId}`).set('Authorization', buyer.bearer)).status).toBe(404);
  const mine = await request(stack.urls.order).get('/api/orders/me').set('Authorization', buyer.bearer);
  expect(mine.body.map((o: { paymentId: string }) => o.paymentId)).toEqual([later.paymentId]);

  // Analytics has read the refund and the later sale: only the later sale is revenue, nothing was refunded from it.
  const analyticsDb = stack.services.analytics!.db;
  const awaited = [...eventsOf(TOPICS.paymentRefunded, payment.paymentId), ...eventsOf(TOPICS.paymentSuccess, later.paymentId)].map((m) => JSON.parse(m.value).eventId as string);
  await waitFor(async () => (await analyticsDb.manager.count(ProcessedEvent, { where: { consumer: consumerGroupOf('analytics'), eventId: In(awaited) } })) === awaited.length, {
    what: 'analytics to ingest the refund and the later sale',
  });
  const analytics = (path: string) => request(stack.urls.analytics).get(`/analytics/${path}`).set('Authorization', admin.bearer);
  expect((await analytics('dashboard')).body).toMatchObject({ paidOrders: 1, totalRevenue: 10, booksSold: 1 });
  expect((await analytics('payments')).body).toMatchObject({ paidOrders: 1, refundedPayments: 0, refundedAmount: 0 });
});

it('moves a FAILED payment to REFUNDED when the refund of a later success comes first', async () => {
  const buyer = await registeredUser(stack);
  const { body: payment } = await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 1 }]);
  await sim().fail(payment.paymentIntentId, 'card_declined');
  await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.status === 'FAILED', 'FAILED');
  const { success, refund } = await withheld(async () => ({
    success: (await sim().confirm(payment.paymentIntentId)).event.event,
    refund: (await sim().refund(payment.paymentIntentId)).event.event,
  }));

  await deliver(refund);
  await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.status === 'REFUNDED', 'REFUNDED from FAILED');
  await deliver(success);
  await laterPurchase(buyer);

  expect((await request(stack.urls.payment).get(`/api/payments/${payment.paymentId}`).set('Authorization', buyer.bearer)).body.status).toBe('REFUNDED');
  expect(eventsOf(TOPICS.paymentSuccess, payment.paymentId)).toHaveLength(0);
  expect(eventsOf(TOPICS.paymentRefunded, payment.paymentId)).toHaveLength(1);
  expect((await request(stack.urls.order).get(`/api/orders/payment/${payment.paymentId}`).set('Authorization', buyer.bearer)).status).toBe(404);
});
