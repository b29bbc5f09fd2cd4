import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ConsumedMessage, Subscription } from '../../platform/events/bus';
import { ProcessedEvent, consumerGroupOf } from '../../platform/events/consumer';
import { TOPICS, type OrderCancelledEvent } from '../../platform/events/topics';
import { checkout, createBook, paymentWhen, type CatalogueBook } from '../../test/commerce';
import { orderCancelledEvent } from '../../test/event-fixtures';
import { graphql } from '../../test/graphql';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';

let stack: Stack;
let admin: Awaited<ReturnType<typeof adminSession>>;
let novel: CatalogueBook;
let observer: Subscription;
// A refund waits on several paid orders, the provider and the consumers: more than Jest's 30 s on a loaded machine.
jest.setTimeout(90_000);

const cancellations: ConsumedMessage[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment'] });
  admin = await adminSession(stack);
  novel = await createBook(stack, admin.bearer, 'Emma', 14.5);
  observer = await stack.bus.subscribe({ groupId: `observer-${randomUUID()}`, topics: [TOPICS.orderCancelled], handle: async (m) => void cancellations.push(m) });
}, 60_000);
afterAll(async () => {
  await observer?.stop();
  await stack?.stop();
});

const sim = () => stack.stripe!;
const refundsOf = (intentId: string) =>
  sim()
    .refunds()
    .filter((refund) => refund.payment_intent === intentId);
const handled = (eventId: string) => stack.services.payment!.db.manager.count(ProcessedEvent, { where: { consumer: consumerGroupOf('payment'), eventId } });

const cancelledEvent = (paymentId: string, userId: string) =>
  orderCancelledEvent({ paymentId, userId, items: [{ bookId: novel.id, bookTitle: 'Emma', quantity: 1, price: 14.5 }] });

async function publish(event: OrderCancelledEvent): Promise<void> {
  await stack.bus.publish([{ topic: TOPICS.orderCancelled, key: event.orderId, value: JSON.stringify(event) }]);
  await waitFor(async () => (await handled(event.eventId)) === 1, { what: 'order-cancelled to be handled' });
}

describe('order-cancelled at the payment service', () => {
  it('refunds nothing for a payment that holds no money or that it does not know', async () => {
    const buyer = await registeredUser(stack);
    const { body: pending } = await checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 1 }]);
    await publish(cancelledEvent(pending.paymentId, buyer.userId));
    await publish(cancelledEvent(randomUUID(), buyer.userId));
    expect(refundsOf(pending.paymentIntentId)).toEqual([]);
    expect((await paymentWhen(stack, buyer.bearer, pending.paymentId, () => true, 'the payment')).status).toBe('PAYMENT_PENDING');
  });

  it('takes a charge already refunded at the provider as done, and the payment follows the provider', async () => {
    const buyer = await registeredUser(stack);
    const { body: payment } = await checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 2 }]);
    await sim().confirm(payment.paymentIntentId);
    const { orderId } = await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.status === 'SUCCESS' && p.orderId !== null, 'SUCCESS with its order');

    // The merchant refunds in the provider's dashboard while its webhook cannot reach us.
    const paymentUrl = stack.config.urls.payment;
    stack.config.urls.payment = 'http://127.0.0.1:9';
    let dashboardRefund;
    try {
      dashboardRefund = await sim().refund(payment.paymentIntentId);
      const cancel = await request(stack.urls.order)
        .post(`/api/orders/${String(orderId)}/cancel`)
        .set('Authorization', buyer.bearer);
      expect(cancel.status).toBe(204);
      const event = await waitFor(() => cancellations.find((m) => m.key === orderId), { what: 'order-cancelled' });
      await waitFor(async () => (await handled(JSON.parse(event.value).eventId)) === 1, { what: 'the cancel to be handled at the payment service' });
    } finally {
      stack.config.urls.payment = paymentUrl;
    }
    expect(refundsOf(payment.paymentIntentId)).toHaveLength(1);

    await sim().resend(dashboardRefund.event.event.id);
    await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.status === 'REFUNDED', 'REFUNDED once the webhook arrives');
  });
});

interface PaidOrder {
  paymentId: string;
  orderId: string;
  intentId: string;
}

/** Checks out one copy, pays at the simulator and waits for the order. */
async function paidOrder(bearer: string): Promise<PaidOrder> {
  const { body } = await checkout(stack, bearer, [{ bookId: novel.id, quantity: 1 }]);
  await sim().confirm(body.paymentIntentId);
  const order = await waitFor(
    async () => {
      const res = await request(stack.urls.order).get(`/api/orders/payment/${body.paymentId}`).set('Authorization', bearer);
      return res.status === 200 ? res.body : undefined;
    },
    { what: 'the order of the paid checkout' },
  );
  return { paymentId: body.paymentId, orderId: order.orderId, intentId: body.paymentIntentId };
}

const cancel = (orderId: string, bearer: string) => request(stack.urls.order).post(`/api/orders/${orderId}/cancel`).set('Authorization', bearer);
const failedRefunds = async () =>
  (await request(stack.urls.payment).get('/api/payments/refunds?status=FAILED').set('Authorization', admin.bearer)).body as Record<string, unknown>[];
const retry = (refundId: string, bearer = admin.bearer) => request(stack.urls.payment).post(`/api/payments/refunds/${refundId}/retry`).set('Authorization', bearer);
const orderAsAdmin = async (orderId: string) => (await request(stack.urls.order).get(`/api/orders/${orderId}`).set('Authorization', admin.bearer)).body;

describe('a refund the provider refuses for good', () => {
  it('is parked FAILED and shown to an admin, later cancellations are refunded at once, and an admin retry refunds it once', async () => {
    const buyer = await registeredUser(stack);
    const refused = await paidOrder(buyer.bearer);
    const next = await paidOrder(buyer.bearer);

    sim().injectFaults({ refuseRefunds: 1 });
    expect((await cancel(refused.orderId, buyer.bearer)).status).toBe(204);
    const parked = await waitFor(async () => (await failedRefunds()).find((refund) => refund.paymentId === refused.paymentId), { what: 'the refused refund in the failed list' });
    expect(parked).toMatchObject({
      paymentId: refused.paymentId,
      orderId: refused.orderId,
      amount: 14.5,
      reason: 'REQUESTED_BY_CUSTOMER',
      note: null,
      items: [{ bookId: novel.id, quantity: 1 }],
      restock: true,
      status: 'FAILED',
      failureReason: 'The account balance cannot cover the refund',
    });
    const refundId = parked.refundId as string;

    // The partition moves on: the next cancellation is refunded straight away.
    expect((await cancel(next.orderId, buyer.bearer)).status).toBe(204);
    await waitFor(() => refundsOf(next.intentId).length === 1, { what: 'the next cancellation refunded at the provider' });
    expect(refundsOf(refused.intentId)).toEqual([]);

    const payment = await paymentWhen(stack, buyer.bearer, refused.paymentId, () => true, 'the refused payment');
    expect(payment).toMatchObject({ status: 'SUCCESS', refundedAmount: 0, refunds: [expect.objectContaining({ refundId, status: 'FAILED' })] });
    await waitFor(async () => (await orderAsAdmin(refused.orderId)).refundStatus === 'FAILED', { what: 'the order to show the refund FAILED' });
    const nextOrder = await waitFor(
      async () => {
        const order = await orderAsAdmin(next.orderId);
        return order.refundStatus === 'REFUNDED' ? order : undefined;
      },
      { what: 'the next order to show its refund REFUNDED' },
    );
    expect(nextOrder.status).toBe('CANCELLED');

    const overGraphql = await graphql(
      stack.urls.payment,
      'query ($id: ID!) { failedRefunds { refundId status failureReason } payment(paymentId: $id) { refundedAmount refunds { refundId amount status failureReason } } }',
      {
        bearer: admin.bearer,
        variables: { id: refused.paymentId },
      },
    );
    expect(overGraphql.body.errors).toBeUndefined();
    expect(overGraphql.body.data.failedRefunds).toContainEqual({ refundId, status: 'FAILED', failureReason: 'The account balance cannot cover the refund' });
    expect(overGraphql.body.data.payment).toEqual({
      refundedAmount: '0.00',
      refunds: [{ refundId, amount: '14.50', status: 'FAILED', failureReason: 'The account balance cannot cover the refund' }],
    });
    const orderOverGraphql = await graphql(stack.urls.order, 'query ($id: ID!) { order(orderId: $id) { status refundStatus } }', {
      bearer: admin.bearer,
      variables: { id: refused.orderId },
    });
    expect(orderOverGraphql.body).toEqual({ data: { order: { status: 'CANCELLED', refundStatus: 'FAILED' } } });

    // Only an admin sees the queue or retries.
    expect((await request(stack.urls.payment).get('/api/payments/refunds?status=FAILED').set('Authorization', buyer.bearer)).status).toBe(403);
    expect((await retry(refundId, buyer.bearer)).status).toBe(403);
    const notAdmin = await graphql(stack.urls.payment, 'mutation ($id: ID!) { retryRefund(refundId: $id) { status } }', { bearer: buyer.bearer, variables: { id: refundId } });
    expect(notAdmin.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    // Refused again: the retry is carried out and the refund stays FAILED.
    sim().injectFaults({ refuseRefunds: 1 });
    const again = await retry(refundId);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ refundId, status: 'FAILED', failureReason: 'The account balance cannot cover the refund' });
    expect(refundsOf(refused.intentId)).toEqual([]);

    // The fault is lifted: a retry (under a new key, past the stored refusals) refunds once.
    const retried = await graphql(stack.urls.payment, 'mutation ($id: ID!) { retryRefund(refundId: $id) { refundId status failureReason } }', {
      bearer: admin.bearer,
      variables: { id: refundId },
    });
    expect(retried.body).toEqual({ data: { retryRefund: { refundId, status: 'SUCCEEDED', failureReason: null } } });
    expect(refundsOf(refused.intentId)).toEqual([expect.objectContaining({ amount: 1450, status: 'succeeded' })]);
    const refunded = await paymentWhen(stack, buyer.bearer, refused.paymentId, (p) => p.status === 'REFUNDED', 'the payment REFUNDED by the webhook');
    expect(refunded).toMatchObject({ refundedAmount: 14.5, refunds: [expect.objectContaining({ refundId, status: 'SUCCEEDED' })] });
    await waitFor(async () => (await orderAsAdmin(refused.orderId)).refundStatus === 'REFUNDED', { what: 'the order to show the refund REFUNDED' });
    expect((await failedRefunds()).map((refund) => refund.refundId)).not.toContain(refundId);

    const twice = await retry(refundId);
    expect(twice.status).toBe(409);
    expect(refundsOf(refused.intentId)).toHaveLength(1);
  });
});
