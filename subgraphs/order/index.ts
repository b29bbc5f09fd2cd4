/** The order service: orders made from successful payments, their status and cancellation (CONTRACT §6), and the outbound webhooks (§11). */
import { buildService, type ServiceDeps } from '../../rest-compat/service';
import { Order, OrderItem, RefundedPayment } from './entities';
import { orderConsumers } from './events';
import { CreateOrders1732000000400 } from './migrations/1732000000400-CreateOrders';
import { RefundedPayments1732000000410 } from './migrations/1732000000410-RefundedPayments';
import { OrderRefundStatus1732000000420 } from './migrations/1732000000420-OrderRefundStatus';
import { Webhooks1732000000430 } from './migrations/1732000000430-Webhooks';
import { orderLoaders, orderResolvers } from './resolvers';
import { orderRoutes } from './routes';
import { OrderService } from './service';
import { WEBHOOKS_PATH, WEBHOOK_ENTITIES, buildWebhooks } from './webhooks';

export function createOrderService(deps: ServiceDeps) {
  return buildService(deps, {
    name: 'order',
    description: 'Orders created from successful payments',
    dir: __dirname,
    basePath: '/api/orders',
    entities: [Order, OrderItem, RefundedPayment, ...WEBHOOK_ENTITIES],
    migrations: [CreateOrders1732000000400, RefundedPayments1732000000410, OrderRefundStatus1732000000420, Webhooks1732000000430],
    build: (shell) => {
      const { db, logger, verifier, events } = shell;
      const orders = new OrderService(db, logger);
      const webhooks = buildWebhooks(shell);
      return {
        routes: orderRoutes(orders, verifier),
        moreRoutes: { [WEBHOOKS_PATH]: webhooks.routes },
        subgraph: { resolvers: orderResolvers(orders, webhooks.webhooks), loaders: orderLoaders(orders) },
        consumers: () => {
          const own = orderConsumers(events, orders);
          // After the others: it reads some of their topics, and two first subscriptions to a new topic at once can race its creation.
          return [...own, Promise.all(own).then(webhooks.consumer)];
        },
        afterStart: webhooks.start,
        beforeStop: webhooks.stop,
        expose: { orders, webhooks: webhooks.webhooks },
      };
    },
  });
}
