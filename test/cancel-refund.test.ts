/**
 * Cancelling a paid order, end to end through the gateway: the order service publishes
 * `order-cancelled`, the payment service refunds the PaymentIntent through the `stripe` SDK at the
 * simulator, the simulator's signed `charge.refunded` webhook makes the payment REFUNDED, and
 * analytics takes the sale back out of the day it was paid; the book service puts the copies back
 * on the shelf.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { In } from 'typeorm';
import type { ConsumedMessage, Subscription } from '../platform/events/bus';
import { ProcessedEvent, consumerGroupOf } from '../platform/events/consumer';
import { TOPICS } from '../platform/events/topics';
import { checkout, createBook, paymentWhen, type CatalogueBook } from './commerce';
import { startGateway, type RunningGateway } from './gateway';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from './harness';

let stack: Stack;
let gateway: RunningGateway;
let admin: Awaited<ReturnType<typeof adminSession>>;
let observer: Subscription;
const cancellations: ConsumedMessage[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'] });
  gateway = await startGateway(stack.config);
  admin = await adminSession(stack);
  observer = await stack.bus.subscribe({ groupId: `observer-${randomUUID()}`, topics: [TOPICS.orderCancelled], handle: async (m) => void cancellations.push(m) });
}, 60_000);
afterAll(async () => {
  await observer?.stop();
  await gateway?.stop();
  await stack?.stop();
});

const api = () => request(gateway.url);
const sim = () => stack.stripe!;
const analytics = async (path: string) => (await api().get(path).set('Authorization', admin.bearer)).body;

interface PaidOrder {
  paymentId: string;
  orderId: string;
  intentId: string;
}

/** Checks out `quantity` copies, pays at the simulator and waits for the CONFIRMED order. */
async function buyAndPay(bearer: string, book: CatalogueBook, quantity: number): Promise<PaidOrder> {
  const res = await checkout({ ...stack, urls: { ...stack.urls, payment: gateway.url } }, bearer, [{ bookId: book.id, quantity }]);
  expect(res.status).toBe(200);
  await sim().confirm(res.body.paymentIntentId);
  const order = await waitFor(
    async () => {
      const answer = await api().get(`/api/orders/payment/${res.body.paymentId}`).set('Authorization', bearer);
      return answer.status === 200 ? answer.body : undefined;
    },
    { what: 'the order of the paid checkout' },
  );
  expect(order.status).toBe('CONFIRMED');
  return { paymentId: res.body.paymentId, orderId: order.orderId, intentId: res.body.paymentIntentId };
}

const refundsOf = (intentId: string) =>
  sim()
    .refunds()
    .filter((refund) => refund.payment_intent === intentId);
const refundEventsOf = (intentId: string) =>
  sim()
    .events()
    .filter((event) => event.type === 'charge.refunded' && (event.data.object as { payment_intent?: string }).payment_intent === intentId);

describe('cancelling a paid order', () => {
  it('gives the money back: 204, order CANCELLED, payment REFUNDED, revenue and books sold back down, stock back up', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, admin.bearer, `Cancelled ${randomUUID().slice(0, 8)}`, 12.5, 5);
    const stock = async () => (await api().get(`/api/books/${book.id}`)).body.stock;
    const before = { dashboard: await analytics('/analytics/dashboard'), payments: await analytics('/analytics/payments') };

    const paid = await buyAndPay(buyer.bearer, book, 2);
    await waitFor(async () => (await analytics('/analytics/dashboard')).paidOrders === before.dashboard.paidOrders + 1, { what: 'the sale in the dashboard' });
    const sold = await analytics('/analytics/dashboard');
    expect(sold).toMatchObject({ totalRevenue: before.dashboard.totalRevenue + 25, booksSold: before.dashboard.booksSold + 2 });
    await waitFor(async () => (await stock()) === 3, { what: 'the order to take two copies off the stock' });

    const cancel = await api().post(`/api/orders/${paid.orderId}/cancel`).set('Authorization', buyer.bearer);
    expect(cancel.status).toBe(204);
    expect((await api().get(`/api/orders/${paid.orderId}`).set('Authorization', buyer.bearer)).body.status).toBe('CANCELLED');

    const payment = await paymentWhen(stack, buyer.bearer, paid.paymentId, (p) => p.status === 'REFUNDED', 'the payment to be REFUNDED');
    expect(payment).toMatchObject({ paymentId: paid.paymentId, orderId: paid.orderId, amount: 25, status: 'REFUNDED' });
    expect(refundsOf(paid.intentId)).toEqual([
      expect.objectContaining({ amount: 2500, status: 'succeeded', metadata: { orderId: paid.orderId, paymentId: paid.paymentId, refundId: expect.any(String), attempt: '0' } }),
    ]);

    await waitFor(async () => (await analytics('/analytics/payments')).refundedPayments === before.payments.refundedPayments + 1, { what: 'the refund in analytics' });
    expect(await analytics('/analytics/payments')).toMatchObject({ refundedAmount: before.payments.refundedAmount + 25, paidOrders: before.payments.paidOrders });
    expect(await analytics('/analytics/dashboard')).toMatchObject({
      paidOrders: before.dashboard.paidOrders,
      totalRevenue: before.dashboard.totalRevenue,
      booksSold: before.dashboard.booksSold,
    });
    expect((await analytics('/analytics/books')).topBooks.find((top: { bookId: string }) => top.bookId === book.id)).toBeUndefined();
    expect((await api().get(`/api/orders/${paid.orderId}`).set('Authorization', buyer.bearer)).body.status).toBe('CANCELLED');
    await waitFor(async () => (await stock()) === 5, { what: 'the cancelled copies back in stock' });
  });

  it('refunds once when order-cancelled is delivered again, twice', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, admin.bearer, 'Redelivered', 9.99);
    const paid = await buyAndPay(buyer.bearer, book, 1);
    expect((await api().post(`/api/orders/${paid.orderId}/cancel`).set('Authorization', buyer.bearer)).status).toBe(204);
    await paymentWhen(stack, buyer.bearer, paid.paymentId, (p) => p.status === 'REFUNDED', 'the payment to be REFUNDED');

    const original = await waitFor(() => cancellations.find((m) => m.key === paid.orderId), { what: 'order-cancelled' });
    const again = { topic: TOPICS.orderCancelled, key: original.key, value: original.value };
    await stack.bus.publish([again]);
    await stack.bus.publish([again]);
    // The same event published again under a new id (a producer that retried) follows on the same partition.
    const copy = { ...again, value: JSON.stringify({ ...JSON.parse(original.value), eventId: randomUUID() }) };
    await stack.bus.publish([copy]);
    const paymentDb = stack.services.payment!.db;
    await waitFor(
      async () => (await paymentDb.manager.count(ProcessedEvent, { where: { consumer: consumerGroupOf('payment'), eventId: In([JSON.parse(copy.value).eventId]) } })) === 1,
      { what: 'the copy to be handled' },
    );

    expect(refundsOf(paid.intentId)).toHaveLength(1);
    expect(refundEventsOf(paid.intentId)).toHaveLength(1);
    expect((await paymentWhen(stack, buyer.bearer, paid.paymentId, () => true, 'the payment')).status).toBe('REFUNDED');
  });

  it('refunds each of six orders cancelled at once exactly once, however the events are batched', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, admin.bearer, `Cancelled together ${randomUUID().slice(0, 8)}`, 7.25, 20);
    // Bought one after the other: a customer's new checkout of a book replaces their unpaid one (CONTRACT §4).
    const paid: PaidOrder[] = [];
    for (let n = 0; n < 6; n += 1) paid.push(await buyAndPay(buyer.bearer, book, 1));

    const cancels = await Promise.all(paid.map((order) => api().post(`/api/orders/${order.orderId}/cancel`).set('Authorization', buyer.bearer)));
    expect(cancels.map((res) => res.status)).toEqual([204, 204, 204, 204, 204, 204]);

    for (const order of paid) await paymentWhen(stack, buyer.bearer, order.paymentId, (p) => p.status === 'REFUNDED', `payment ${order.paymentId} to be REFUNDED`);
    for (const order of paid) {
      expect(refundsOf(order.intentId)).toEqual([
        expect.objectContaining({ amount: 725, status: 'succeeded', metadata: { orderId: order.orderId, paymentId: order.paymentId, refundId: expect.any(String), attempt: '0' } }),
      ]);
      expect(refundEventsOf(order.intentId)).toHaveLength(1);
    }
  });

  it('retries a refund the provider refuses until it goes through', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, admin.bearer, 'Refused at first', 30);
    const paid = await buyAndPay(buyer.bearer, book, 1);

    sim().injectFaults({ failNext: 3, status: 500 });
    expect((await api().post(`/api/orders/${paid.orderId}/cancel`).set('Authorization', buyer.bearer)).status).toBe(204);
    await paymentWhen(stack, buyer.bearer, paid.paymentId, (p) => p.status === 'REFUNDED', 'the payment to be REFUNDED after the refusals');

    expect(sim().injectFaults({}).failNext).toBe(0);
    expect(refundsOf(paid.intentId)).toEqual([expect.objectContaining({ amount: 3000, status: 'succeeded' })]);
    expect(refundEventsOf(paid.intentId)).toHaveLength(1);
    // A passing refusal is never parked: the refund is recorded once, SUCCEEDED, and nothing waits for an admin.
    const payment = await paymentWhen(stack, buyer.bearer, paid.paymentId, () => true, 'the payment');
    expect(payment).toMatchObject({ refundedAmount: 30, refunds: [expect.objectContaining({ amount: 30, status: 'SUCCEEDED', failureReason: null })] });
    const failed = await api().get('/api/payments/refunds?status=FAILED').set('Authorization', admin.bearer);
    expect(failed.status).toBe(200);
    expect(failed.body.filter((refund: { paymentId: string }) => refund.paymentId === paid.paymentId)).toEqual([]);
    await waitFor(async () => (await api().get(`/api/orders/${paid.orderId}`).set('Authorization', admin.bearer)).body.refundStatus === 'REFUNDED', {
      what: 'the order to show its refund REFUNDED',
    });
  });
});
