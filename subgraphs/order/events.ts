/**
 * What the order service consumes: `payment-success` creates the order, `payment-refunded` refunds
 * it, `payment-refund-failed` shows an admin that its refund waits for them.
 */
import type { Database } from '../../platform/database';
import type { EventBus, Subscription } from '../../platform/events/bus';
import { consume } from '../../platform/events/consumer';
import { PaymentRefundFailedEvent, PaymentRefundedEvent, PaymentSuccessEvent, TOPICS } from '../../platform/events/topics';
import type { Logger } from '../../platform/logger';
import type { OrderService } from './service';

export const ORDER_CONSUMER_GROUP = 'order-service';

export function subscribeOrderEvents(bus: EventBus, db: Database, logger: Logger, service: OrderService): Promise<Subscription[]> {
  const common = { bus, db, logger, groupId: ORDER_CONSUMER_GROUP };
  return Promise.all([
    consume({
      ...common,
      topic: TOPICS.paymentSuccess,
      schema: PaymentSuccessEvent,
      apply: (event, manager) => service.createFromPayment(manager, event),
      afterCommit: () => service.eventsCommitted(),
    }),
    consume({
      ...common,
      topic: TOPICS.paymentRefunded,
      schema: PaymentRefundedEvent,
      apply: (event, manager) => service.markRefunded(manager, event),
    }),
    consume({
      ...common,
      topic: TOPICS.paymentRefundFailed,
      schema: PaymentRefundFailedEvent,
      apply: (event, manager) => service.markRefundFailed(manager, event),
    }),
  ]);
}
