/**
 * Helpers for the analytics tests: payment events of one payment, each built for a given UTC day
 * (at noon), published straight onto the bus, and waiting for the dashboard to show them.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { TOPICS, type EventItem } from '../platform/events/topics';
import type { Stack } from './stack';
import { waitFor } from './wait';

export const book = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export function item(bookId: string, quantity: number, price: number): EventItem {
  return { bookId, bookTitle: `Title ${bookId.slice(-2)}`, quantity, price };
}

export interface Publishable {
  topic: string;
  event: Record<string, unknown> & { eventId: string; paymentId: string };
}

const at = (day: string) => `${day}T12:00:00.000Z`;

/** The events of one payment of `amount` for `items`. */
export function events(paymentId: string, amount: number, items: EventItem[]) {
  const base = { paymentId, checkoutId: randomUUID(), userId: randomUUID() };
  return {
    created: (day: string): Publishable => ({
      topic: TOPICS.paymentCreated,
      event: { eventId: randomUUID(), type: 'PaymentCreatedEvent', occurredAt: at(day), ...base, amount, items },
    }),
    success: (day: string): Publishable => ({
      topic: TOPICS.paymentSuccess,
      event: {
        eventId: randomUUID(),
        type: 'PaymentSuccessEvent',
        occurredAt: at(day),
        ...base,
        transactionId: 'pi_1',
        amount,
        items,
        email: 'a@example.com',
        firstName: 'A',
        phoneNumber: '+10000000000',
      },
    }),
    completed: (day: string): Publishable => ({
      topic: TOPICS.paymentCompleted,
      event: { eventId: randomUUID(), type: 'PaymentCompletedEvent', occurredAt: at(day), paymentId, orderId: randomUUID(), transactionId: 'pi_1', amount },
    }),
    failed: (day: string): Publishable => ({
      topic: TOPICS.paymentFailed,
      event: { eventId: randomUUID(), type: 'PaymentFailedEvent', occurredAt: at(day), ...base, transactionId: 'pi_1', amount, reason: 'card_declined' },
    }),
    /** The payment refunded in full (`payment-refunded`). */
    refunded: (day: string): Publishable => ({
      topic: TOPICS.paymentRefunded,
      event: { eventId: randomUUID(), type: 'PaymentRefundedEvent', occurredAt: at(day), paymentId, userId: base.userId, transactionId: 'pi_1', amount },
    }),
    /** One refund that succeeded (`payment-refund-succeeded`): of `lines`, or of an amount when `lines` is empty. */
    refundSucceeded: (day: string, refund: { amount: number; refundedAmount: number; lines: EventItem[]; full?: boolean }): Publishable => ({
      topic: TOPICS.paymentRefundSucceeded,
      event: {
        eventId: randomUUID(),
        type: 'PaymentRefundSucceededEvent',
        occurredAt: at(day),
        refundId: randomUUID(),
        paymentId,
        orderId: '',
        userId: base.userId,
        amount: refund.amount,
        refundedAmount: refund.refundedAmount,
        paymentAmount: amount,
        reason: 'requested_by_customer',
        note: '',
        items: refund.lines,
        restock: refund.lines.length > 0,
        full: refund.full ?? false,
      },
    }),
  };
}

/** `/analytics/dashboard` before any event; tests spread it and set what their events change. */
export const EMPTY_DASHBOARD = {
  totalOrders: 0,
  paidOrders: 0,
  failedPayments: 0,
  totalRevenue: 0,
  averageOrderValue: 0,
  booksSold: 0,
  paymentSuccessRate: 0,
  totalRefunds: 0,
  refundedAmount: 0,
};

export async function publish(stack: Stack, items: Publishable[]): Promise<void> {
  for (const { topic, event } of items) await stack.bus.publish([{ topic, key: event.paymentId, value: JSON.stringify(event) }]);
}

export async function dashboardWhen(stack: Stack, bearer: string, predicate: (body: Record<string, number>) => boolean) {
  return waitFor(
    async () => {
      const res = await request(stack.urls.analytics).get('/analytics/dashboard').set('Authorization', bearer);
      return res.status === 200 && predicate(res.body) ? (res.body as Record<string, number>) : undefined;
    },
    { what: 'the dashboard to show the events' },
  );
}
