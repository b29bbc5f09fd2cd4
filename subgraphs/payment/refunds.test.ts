import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ConsumedMessage, Subscription } from '../../platform/events/bus';
import { ProcessedEvent } from '../../platform/events/consumer';
import { TOPICS, type OrderCancelledEvent } from '../../platform/events/topics';
import { checkout, createBook, paymentWhen, type CatalogueBook } from '../../test/commerce';
import { orderCancelledEvent } from '../../test/event-fixtures';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';
import { PAYMENT_CONSUMER_GROUP } from './events';

let stack: Stack;
let novel: CatalogueBook;
let observer: Subscription;
const cancellations: ConsumedMessage[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment'] });
  novel = await createBook(stack, (await adminSession(stack)).bearer, 'Emma', 14.5);
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
const handled = (eventId: string) => stack.services.payment!.db.manager.count(ProcessedEvent, { where: { consumer: PAYMENT_CONSUMER_GROUP, eventId } });

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
