/**
 * What the payment service publishes (payment-created, -success, -failed, -refunded,
 * -refund-failed, all through the outbox) and consumes (order-created, which fills in the payment's orderId; order-cancelled,
 * which refunds the payment).
 */
import type { EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import type { EventBus, Subscription } from '../../platform/events/bus';
import { consume } from '../../platform/events/consumer';
import { enqueueEvent, eventEnvelope } from '../../platform/events/outbox';
import {
  OrderCancelledEvent,
  OrderCreatedEvent,
  TOPICS,
  type EventItem,
  type PaymentCreatedEvent,
  type PaymentFailedEvent,
  type PaymentRefundedEvent,
  type PaymentRefundFailedEvent,
  type PaymentSuccessEvent,
} from '../../platform/events/topics';
import type { Logger } from '../../platform/logger';
import { fromCents } from '../../platform/money';
import { Payment, type PaymentItem } from './entities';
import type { Refunds } from './refunds';

export const PAYMENT_CONSUMER_GROUP = 'payment-service';

/** What every event about one checkout's payment carries (`CheckoutPaymentEvent`), from its row. */
function checkoutPaymentFields(payment: Payment) {
  return { paymentId: payment.id, checkoutId: payment.checkoutId, userId: payment.userId, amount: fromCents(payment.amountCents) };
}

function eventItems(items: PaymentItem[]): EventItem[] {
  return items.map((item) => ({ bookId: item.bookId, bookTitle: item.bookTitle, quantity: item.quantity, price: fromCents(item.unitPriceCents) }));
}

export async function publishPaymentCreated(manager: EntityManager, payment: Payment, items: PaymentItem[]): Promise<void> {
  const event: PaymentCreatedEvent = {
    ...eventEnvelope('PaymentCreatedEvent', payment.createdAt),
    ...checkoutPaymentFields(payment),
    items: eventItems(items),
  };
  await enqueueEvent(manager, TOPICS.paymentCreated, payment.id, event);
}

export async function publishPaymentSuccess(manager: EntityManager, payment: Payment, items: PaymentItem[], occurredAt: Date): Promise<void> {
  const event: PaymentSuccessEvent = {
    ...eventEnvelope('PaymentSuccessEvent', occurredAt),
    ...checkoutPaymentFields(payment),
    transactionId: payment.paymentIntentId ?? '',
    items: eventItems(items),
    email: payment.customerEmail,
    firstName: payment.customerFirstName,
    phoneNumber: payment.customerPhone,
  };
  await enqueueEvent(manager, TOPICS.paymentSuccess, payment.id, event);
}

export async function publishPaymentFailed(manager: EntityManager, payment: Payment, reason: string, occurredAt: Date): Promise<void> {
  const event: PaymentFailedEvent = {
    ...eventEnvelope('PaymentFailedEvent', occurredAt),
    ...checkoutPaymentFields(payment),
    transactionId: payment.paymentIntentId ?? '',
    reason,
  };
  await enqueueEvent(manager, TOPICS.paymentFailed, payment.id, event);
}

export async function publishPaymentRefunded(manager: EntityManager, payment: Payment, occurredAt: Date): Promise<void> {
  const event: PaymentRefundedEvent = {
    ...eventEnvelope('PaymentRefundedEvent', occurredAt),
    paymentId: payment.id,
    userId: payment.userId,
    transactionId: payment.paymentIntentId ?? '',
    amount: fromCents(payment.amountCents),
  };
  await enqueueEvent(manager, TOPICS.paymentRefunded, payment.id, event);
}

/** A refund of the order was refused for good and waits for an admin (`reason`: the provider's code). */
export async function publishRefundFailed(manager: EntityManager, payment: Payment, orderId: string, reason: string): Promise<void> {
  const event: PaymentRefundFailedEvent = {
    ...eventEnvelope('PaymentRefundFailedEvent'),
    paymentId: payment.id,
    orderId,
    userId: payment.userId,
    reason,
  };
  await enqueueEvent(manager, TOPICS.paymentRefundFailed, payment.id, event);
}

/** `order-created` tells the payment which order it produced; `order-cancelled` refunds it. */
export function subscribePaymentEvents(bus: EventBus, db: Database, logger: Logger, refunds: Refunds): Promise<Subscription[]> {
  const common = { bus, db, logger, groupId: PAYMENT_CONSUMER_GROUP };
  return Promise.all([
    consume({
      ...common,
      topic: TOPICS.orderCreated,
      schema: OrderCreatedEvent,
      apply: async (event, manager) => {
        await manager.update(Payment, { id: event.paymentId.toLowerCase() }, { orderId: event.orderId.toLowerCase(), updatedAt: new Date() });
      },
    }),
    consume({
      ...common,
      topic: TOPICS.orderCancelled,
      schema: OrderCancelledEvent,
      // The provider call happens outside the transaction; what is left is to record the event as handled.
      prepare: (event) => refunds.refundCancelled(event),
      apply: async () => undefined,
    }),
  ]);
}
