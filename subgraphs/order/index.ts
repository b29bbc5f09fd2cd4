/** The order service: orders made from successful payments, their status and cancellation (CONTRACT §6). */
import { buildService, type ServiceDeps } from '../../rest-compat/service';
import { Order, OrderItem, RefundedPayment } from './entities';
import { orderConsumers } from './events';
import { CreateOrders1732000000400 } from './migrations/1732000000400-CreateOrders';
import { RefundedPayments1732000000410 } from './migrations/1732000000410-RefundedPayments';
import { OrderRefundStatus1732000000420 } from './migrations/1732000000420-OrderRefundStatus';
import { orderLoaders, orderResolvers } from './resolvers';
import { orderRoutes } from './routes';
import { OrderService } from './service';

export function createOrderService(deps: ServiceDeps) {
  return buildService(deps, {
    name: 'order',
    description: 'Orders created from successful payments',
    dir: __dirname,
    basePath: '/api/orders',
    entities: [Order, OrderItem, RefundedPayment],
    migrations: [CreateOrders1732000000400, RefundedPayments1732000000410, OrderRefundStatus1732000000420],
    build: ({ db, logger, verifier, events }) => {
      const orders = new OrderService(db, logger);
      return {
        routes: orderRoutes(orders, verifier),
        subgraph: { resolvers: orderResolvers(orders), loaders: orderLoaders(orders) },
        consumers: () => orderConsumers(events, orders),
        expose: { orders },
      };
    },
  });
}
