/**
 * What the payment service publishes (payment-created, -success, -failed, -refunded, -refund-failed,
 * all through the outbox) and consumes (order-created, which fills in the payment's orderId;
 * order-cancelled, which refunds the payment).
 */
import type { EntityManager } from 'typeorm';
import type { Subscription } from '../../platform/events/bus';
import { enqueueEvent } from '../../platform/events/outbox';
import { TOPICS, type EventItem, type OrderCancelledEvent } from '../../platform/events/topics';
import { fromCents } from '../../platform/money';
import type { ServiceEvents } from '../../rest-compat/service';
import { Payment, type PaymentItem, type Refund } from './entities';

/** What the consumers have done: the refunds' (declared here, so this file imports no service). */
export interface PaymentEffects {
  /** Refunds a cancelled order's payment at the provider, once, whatever the deliveries. */
  refundCancelled(event: OrderCancelledEvent): Promise<void>;
}

/** What every event about one checkout's payment carries (`CheckoutPaymentEvent`), from its row. */
function checkoutPaymentFields(payment: Payment) {
  return { paymentId: payment.id, checkoutId: payment.checkoutId, userId: payment.userId, amount: fromCents(payment.amountCents) };
}

function eventItems(items: PaymentItem[]): EventItem[] {
  return items.map((item) => ({ bookId: item.bookId, bookTitle: item.bookTitle, quantity: item.quantity, price: fromCents(item.unitPriceCents) }));
}

export function publishPaymentCreated(manager: EntityManager, payment: Payment, items: PaymentItem[]): Promise<void> {
  return enqueueEvent(manager, TOPICS.paymentCreated, payment.id, { ...checkoutPaymentFields(payment), items: eventItems(items) }, payment.createdAt);
}

export function publishPaymentSuccess(manager: EntityManager, payment: Payment, items: PaymentItem[], occurredAt: Date): Promise<void> {
  return enqueueEvent(
    manager,
    TOPICS.paymentSuccess,
    payment.id,
    {
      ...checkoutPaymentFields(payment),
      transactionId: payment.paymentIntentId ?? '',
      items: eventItems(items),
      email: payment.customerEmail,
      firstName: payment.customerFirstName,
      phoneNumber: payment.customerPhone,
    },
    occurredAt,
  );
}

export function publishPaymentFailed(manager: EntityManager, payment: Payment, reason: string, occurredAt: Date): Promise<void> {
  const holdId = payment.holdId === null ? {} : { holdId: payment.holdId };
  return enqueueEvent(
    manager,
    TOPICS.paymentFailed,
    payment.id,
    { ...checkoutPaymentFields(payment), transactionId: payment.paymentIntentId ?? '', reason, ...holdId },
    occurredAt,
  );
}

export function publishPaymentRefunded(manager: EntityManager, payment: Payment, occurredAt: Date): Promise<void> {
  const fields = { paymentId: payment.id, userId: payment.userId, transactionId: payment.paymentIntentId ?? '', amount: fromCents(payment.amountCents) };
  return enqueueEvent(manager, TOPICS.paymentRefunded, payment.id, fields, occurredAt);
}

/** One refund succeeded (CONTRACT §11); `items` carry the unit price paid, `restock` whether the book service puts them back. */
export function publishRefundSucceeded(
  manager: EntityManager,
  payment: Payment,
  refund: Refund,
  items: { bookId: string; bookTitle: string; quantity: number; unitPriceCents: number }[],
  totals: { refundedCents: number; full: boolean; restock: boolean; attempt: number },
  occurredAt: Date,
): Promise<void> {
  return enqueueEvent(
    manager,
    TOPICS.paymentRefundSucceeded,
    payment.id,
    {
      refundId: refund.id,
      paymentId: payment.id,
      orderId: refund.orderId ?? payment.orderId,
      userId: payment.userId,
      amount: fromCents(refund.amountCents),
      refundedAmount: fromCents(totals.refundedCents),
      paymentAmount: fromCents(payment.amountCents),
      reason: refund.reason,
      note: refund.note ?? '',
      items: items.map((item) => ({ bookId: item.bookId, bookTitle: item.bookTitle, quantity: item.quantity, price: fromCents(item.unitPriceCents) })),
      restock: totals.restock,
      full: totals.full,
      attempt: totals.attempt,
    },
    occurredAt,
  );
}

/** A refund of the order was refused for good and waits for an admin (`reason`: the provider's code). */
export function publishRefundFailed(manager: EntityManager, payment: Payment, orderId: string, reason: string): Promise<void> {
  return enqueueEvent(manager, TOPICS.paymentRefundFailed, payment.id, { paymentId: payment.id, orderId, userId: payment.userId, reason });
}

/**
 * A refund that had succeeded failed at the provider after all (CONTRACT §11): `payment-refund-failed`
 * with what undoes its `payment-refund-succeeded` (the same `refundId` and `attempt`, the amount
 * reversed, and `full` when the payment is no longer REFUNDED).
 */
export function publishRefundReversed(
  manager: EntityManager,
  payment: Payment,
  refund: Refund,
  totals: { refundedCents: number; wasFull: boolean; attempt: number },
  occurredAt: Date,
): Promise<void> {
  return enqueueEvent(
    manager,
    TOPICS.paymentRefundFailed,
    payment.id,
    {
      paymentId: payment.id,
      orderId: refund.orderId ?? payment.orderId,
      userId: payment.userId,
      reason: 'refund_reversed',
      refundId: refund.id,
      attempt: totals.attempt,
      reversedAmount: fromCents(refund.amountCents),
      refundedAmount: fromCents(totals.refundedCents),
      paymentAmount: fromCents(payment.amountCents),
      full: totals.wasFull,
    },
    occurredAt,
  );
}

/** `order-created` tells the payment which order it produced; `order-cancelled` refunds it. */
export function paymentConsumers(events: ServiceEvents, refunds: PaymentEffects): Promise<Subscription>[] {
  return [
    events.consume({
      topic: TOPICS.orderCreated,
      apply: async (event, manager) => {
        await manager.update(Payment, { id: event.paymentId.toLowerCase() }, { orderId: event.orderId.toLowerCase(), updatedAt: new Date() });
      },
    }),
    events.consume({
      topic: TOPICS.orderCancelled,
      // The provider call happens outside the transaction; what is left is to record the event as handled.
      prepare: (event) => refunds.refundCancelled(event),
      apply: async () => undefined,
    }),
  ];
}
