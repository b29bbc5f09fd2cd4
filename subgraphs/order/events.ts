/**
 * What the order service publishes (`order-created` for each order made, `order-cancelled` for each
 * cancel, `order-status-changed` for each move of an order's status, a cancel included, all through the outbox) and consumes: `payment-success` creates the order,
 * `payment-refunded` refunds it, `payment-refund-failed` shows an admin that its refund waits for them,
 * `payment-refund-succeeded` (a refund of part of it) is told to the customer.
 */
import type { EntityManager } from 'typeorm';
import type { Subscription } from '../../platform/events/bus';
import { enqueueEvent } from '../../platform/events/outbox';
import {
  TOPICS,
  type EventItem,
  type PaymentRefundFailedEvent,
  type PaymentRefundSucceededEvent,
  type PaymentRefundedEvent,
  type PaymentSuccessEvent,
} from '../../platform/events/topics';
import type { ServiceEvents } from '../../rest-compat/service';
import type { Order } from './entities';

/** What the consumers have done: the order service's (declared here, so this file imports no service). */
export interface OrderEffects {
  createFromPayment(manager: EntityManager, event: PaymentSuccessEvent): Promise<void>;
  markRefunded(manager: EntityManager, event: PaymentRefundedEvent): Promise<void>;
  markRefundFailed(manager: EntityManager, event: PaymentRefundFailedEvent): Promise<void>;
  refundSucceeded(manager: EntityManager, event: PaymentRefundSucceededEvent): Promise<void>;
}

export function publishOrderCreated(manager: EntityManager, order: Order, items: EventItem[], totalAmount: number): Promise<void> {
  return enqueueEvent(manager, TOPICS.orderCreated, order.id, {
    orderId: order.id,
    paymentId: order.paymentId,
    userId: order.userId,
    totalAmount,
    items,
    status: order.status,
  });
}

export function publishOrderCancelled(manager: EntityManager, order: Order, items: EventItem[]): Promise<void> {
  return enqueueEvent(manager, TOPICS.orderCancelled, order.id, { orderId: order.id, paymentId: order.paymentId, userId: order.userId, items });
}

export function publishOrderStatusChanged(manager: EntityManager, order: Order, items: EventItem[], status: string): Promise<void> {
  return enqueueEvent(manager, TOPICS.orderStatusChanged, order.id, {
    orderId: order.id,
    paymentId: order.paymentId,
    userId: order.userId,
    items,
    previousStatus: order.status,
    status,
  });
}

export function orderConsumers(events: ServiceEvents, orders: OrderEffects): Promise<Subscription>[] {
  return [
    events.consume({ topic: TOPICS.paymentSuccess, apply: (event, manager) => orders.createFromPayment(manager, event) }),
    events.consume({ topic: TOPICS.paymentRefunded, apply: (event, manager) => orders.markRefunded(manager, event) }),
    events.consume({ topic: TOPICS.paymentRefundFailed, apply: (event, manager) => orders.markRefundFailed(manager, event) }),
    events.consume({ topic: TOPICS.paymentRefundSucceeded, apply: (event, manager) => orders.refundSucceeded(manager, event) }),
  ];
}
