/**
 * payment-refunded and payment-success travel on two topics, which Kafka does not order with each
 * other: a refund may reach the order service before the success it gives back. One order per
 * successful payment, none for a refunded one (CONTRACT §6).
 *
 * The events of a test all carry one message key, so those of one topic share a partition and are
 * read in order: a marker event published after them has been applied only once they have.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ConsumedMessage, Subscription } from '../../platform/events/bus';
import { TOPICS, type PaymentRefundedEvent, type PaymentSuccessEvent } from '../../platform/events/topics';
import { paymentRefundedEvent, paymentSuccessEvent } from '../../test/event-fixtures';
import { registeredUser, startStack, waitFor, type Stack } from '../../test/harness';

let stack: Stack;
let observer: Subscription;
const orderCreated: ConsumedMessage[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order'] });
  observer = await stack.bus.subscribe({
    groupId: `observer-${randomUUID()}`,
    topics: [TOPICS.orderCreated],
    handle: async (m) => void orderCreated.push(m),
  });
});
afterAll(async () => {
  await observer?.stop();
  await stack?.stop();
});

type Buyer = { userId: string; bearer: string };
type Event = PaymentSuccessEvent | PaymentRefundedEvent;

const orders = () => request(stack.urls.order);
const topicOf = (event: Event) => (event.type === 'PaymentSuccessEvent' ? TOPICS.paymentSuccess : TOPICS.paymentRefunded);
const refundOf = (success: PaymentSuccessEvent) => paymentRefundedEvent(success);

/** Publishes `events` in one call (one producer batch), all under message key `key`. */
async function publish(key: string, events: Event[]): Promise<void> {
  await stack.bus.publish(events.map((event) => ({ topic: topicOf(event), key, value: JSON.stringify(event) })));
}

async function orderStatus(buyer: Buyer, paymentId: string): Promise<number | string> {
  const res = await orders().get(`/api/orders/payment/${paymentId}`).set('Authorization', buyer.bearer);
  return res.status === 200 ? (res.body.status as string) : res.status;
}

/** Waits until the order of `paymentId` reads `status`. */
async function orderWhen(buyer: Buyer, paymentId: string, status: string): Promise<void> {
  await waitFor(async () => (await orderStatus(buyer, paymentId)) === status, { what: `the order of ${paymentId} ${status}` });
}

/**
 * An order of `buyer` made earlier, whose refund and a later success of another payment, published
 * under `key` after the events of a test, say when those events have been applied.
 */
async function markers(buyer: Buyer, key: string) {
  const refunded = paymentSuccessEvent(buyer.userId);
  await publish(key, [refunded]);
  await orderWhen(buyer, refunded.paymentId, 'CONFIRMED');
  const later = paymentSuccessEvent(buyer.userId);
  return {
    refund: refundOf(refunded),
    success: later,
    refundsApplied: () => orderWhen(buyer, refunded.paymentId, 'REFUNDED'),
    successesApplied: () => orderWhen(buyer, later.paymentId, 'CONFIRMED'),
    paymentIds: [refunded.paymentId, later.paymentId],
  };
}

const createdFor = (paymentId: string) => orderCreated.filter((m) => JSON.parse(m.value).paymentId === paymentId);

describe('a payment-refunded that arrives before its payment-success', () => {
  it('leaves no order: the later success (and its redelivery) creates none', async () => {
    const buyer = await registeredUser(stack);
    const success = paymentSuccessEvent(buyer.userId);
    const marker = await markers(buyer, success.paymentId);

    await publish(success.paymentId, [refundOf(success)]);
    await publish(success.paymentId, [marker.refund]);
    await marker.refundsApplied();
    await publish(success.paymentId, [success]);
    await publish(success.paymentId, [success]);
    await publish(success.paymentId, [marker.success]);
    await marker.successesApplied();

    expect(await orderStatus(buyer, success.paymentId)).toBe(404);
    const mine = await orders().get('/api/orders/me').set('Authorization', buyer.bearer);
    expect(mine.body.map((o: { paymentId: string }) => o.paymentId).sort()).toEqual([...marker.paymentIds].sort());
    await waitFor(() => createdFor(marker.success.paymentId).length === 1, { what: "the marker's order-created" });
    expect(createdFor(success.paymentId)).toHaveLength(0);
  });

  it('leaves no order for any payment of a batch of refunds then a batch of successes, redelivered refunds included', async () => {
    const buyer = await registeredUser(stack);
    const successes = Array.from({ length: 5 }, () => paymentSuccessEvent(buyer.userId));
    const key = successes[0].paymentId;
    const marker = await markers(buyer, key);
    const refunds = successes.map(refundOf);

    // The same refund twice, and once more under another eventId, in the one batch.
    await publish(key, [...refunds, refunds[0], { ...refunds[1], eventId: randomUUID() }, marker.refund]);
    await marker.refundsApplied();
    await publish(key, [...successes, marker.success]);
    await marker.successesApplied();

    for (const success of successes) expect(await orderStatus(buyer, success.paymentId)).toBe(404);
    const mine = await orders().get('/api/orders/me').set('Authorization', buyer.bearer);
    expect(mine.body).toHaveLength(2);
  });

  it('never leaves a CONFIRMED order when the refund and the success are published together, in either order', async () => {
    const buyer = await registeredUser(stack);
    const refundFirst = paymentSuccessEvent(buyer.userId);
    const successFirst = paymentSuccessEvent(buyer.userId);
    const key = refundFirst.paymentId;
    const marker = await markers(buyer, key);

    await publish(key, [refundOf(refundFirst), refundFirst, successFirst, refundOf(successFirst), marker.refund, marker.success]);
    await marker.refundsApplied();
    await marker.successesApplied();

    // Which topic is read first is up to the consumers: no order, or one that was refunded.
    for (const paymentId of [refundFirst.paymentId, successFirst.paymentId]) {
      expect([404, 'REFUNDED']).toContain(await orderStatus(buyer, paymentId));
    }
  });
});
