/**
 * The order service: orders made from successful payments, their status and cancellation (CONTRACT
 * §6), the e-mails about them, and the outbound webhooks (§11).
 */
import path from 'node:path';
import { createMailer, MAIL_ENTITIES, MAIL_MIGRATIONS } from '../../platform/mail';
import { buildService, type ServiceDeps } from '../../rest-compat/service';
import { Order, OrderItem, RefundedPayment } from './entities';
import { orderConsumers } from './events';
import { CreateOrders1732000000400 } from './migrations/1732000000400-CreateOrders';
import { RefundedPayments1732000000410 } from './migrations/1732000000410-RefundedPayments';
import { OrderRefundStatus1732000000420 } from './migrations/1732000000420-OrderRefundStatus';
import { Webhooks1732000000440 } from './migrations/1732000000440-Webhooks';
import { WebhookSecretOverlaps1732000000450 } from './migrations/1732000000450-WebhookSecretOverlaps';
import { CancellationReason1732000000460 } from './migrations/1732000000460-CancellationReason';
import { OrderMail, OrderMailRecipients1732000000430, OrderRecipient } from './order-mail';
import { orderLoaders, orderResolvers } from './resolvers';
import { orderRoutes } from './routes';
import { OrderService } from './service';
import { httpOrderStock } from './stock';
import { WEBHOOKS_PATH, WEBHOOK_ENTITIES, buildWebhooks } from './webhooks';

export function createOrderService(deps: ServiceDeps) {
  return buildService(deps, {
    name: 'order',
    description: 'Orders created from successful payments',
    dir: __dirname,
    basePath: '/api/orders',
    entities: [Order, OrderItem, RefundedPayment, OrderRecipient, ...MAIL_ENTITIES, ...WEBHOOK_ENTITIES],
    migrations: [
      CreateOrders1732000000400,
      RefundedPayments1732000000410,
      OrderRefundStatus1732000000420,
      ...MAIL_MIGRATIONS,
      OrderMailRecipients1732000000430,
      Webhooks1732000000440,
      WebhookSecretOverlaps1732000000450,
      CancellationReason1732000000460,
    ],
    build: (shell) => {
      const { config, db, logger, verifier, events } = shell;
      const mailer = createMailer({ config, db, logger }, path.join(__dirname, 'mail'));
      const stock = httpOrderStock(() => config.urls.book, config.internalApiKey);
      const orders = new OrderService(db, logger, stock, new OrderMail(mailer.templates, config.stripe.currency));
      const webhooks = buildWebhooks(shell);
      return {
        routes: orderRoutes(orders, verifier),
        moreRoutes: { [WEBHOOKS_PATH]: webhooks.routes },
        subgraph: { resolvers: orderResolvers(orders, webhooks.webhooks), loaders: orderLoaders(orders) },
        consumers: () => [...orderConsumers(events, orders), webhooks.consumer()],
        registerMetrics: webhooks.registerMetrics,
        afterStart: () => {
          mailer.sender.start();
          webhooks.start();
        },
        beforeStop: async () => {
          await webhooks.stop();
          await mailer.sender.stop();
        },
        expose: { orders, webhooks: webhooks.webhooks },
      };
    },
  });
}
