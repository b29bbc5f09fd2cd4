/** The order service: orders made from successful payments, their status and cancellation (CONTRACT §6). */
import path from 'node:path';
import { createMailer, MAIL_ENTITIES, MAIL_MIGRATIONS } from '../../platform/mail';
import { buildService, type ServiceDeps } from '../../rest-compat/service';
import { Order, OrderItem, RefundedPayment } from './entities';
import { orderConsumers } from './events';
import { CreateOrders1732000000400 } from './migrations/1732000000400-CreateOrders';
import { RefundedPayments1732000000410 } from './migrations/1732000000410-RefundedPayments';
import { OrderRefundStatus1732000000420 } from './migrations/1732000000420-OrderRefundStatus';
import { OrderMail, OrderMailRecipients1732000000430, OrderRecipient } from './order-mail';
import { orderLoaders, orderResolvers } from './resolvers';
import { orderRoutes } from './routes';
import { OrderService } from './service';

export function createOrderService(deps: ServiceDeps) {
  return buildService(deps, {
    name: 'order',
    description: 'Orders created from successful payments',
    dir: __dirname,
    basePath: '/api/orders',
    entities: [Order, OrderItem, RefundedPayment, OrderRecipient, ...MAIL_ENTITIES],
    migrations: [CreateOrders1732000000400, RefundedPayments1732000000410, OrderRefundStatus1732000000420, ...MAIL_MIGRATIONS, OrderMailRecipients1732000000430],
    build: ({ config, db, logger, verifier, events }) => {
      const mailer = createMailer({ config, db, logger }, path.join(__dirname, 'mail'));
      const orders = new OrderService(db, logger, new OrderMail(mailer.templates, config.stripe.currency));
      return {
        routes: orderRoutes(orders, verifier),
        subgraph: { resolvers: orderResolvers(orders), loaders: orderLoaders(orders) },
        consumers: () => orderConsumers(events, orders),
        afterStart: () => mailer.sender.start(),
        beforeStop: () => mailer.sender.stop(),
        expose: { orders },
      };
    },
  });
}
