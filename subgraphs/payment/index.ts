/** The payment service: checkouts, Stripe's PaymentIntents and webhook, refunds (CONTRACT §5). */
import { buildService, type ServiceDeps } from '../../rest-compat/service';
import { httpCheckoutDirectory, type CheckoutDirectory } from './clients';
import { Payment, PaymentItem, ProviderEvent, Refund } from './entities';
import { paymentConsumers } from './events';
import { registerRefundMetrics } from './metrics';
import { CreatePayments1732000000500 } from './migrations/1732000000500-CreatePayments';
import { CreateRefunds1732000000510 } from './migrations/1732000000510-CreateRefunds';
import { PaymentTraceContext1732000000520 } from './migrations/1732000000520-PaymentTraceContext';
import { StockHolds1732000000530 } from './migrations/1732000000530-StockHolds';
import { CheckoutHolds } from './holds';
import { stripeProvider, type PaymentProvider } from './provider';
import { Refunds } from './refunds';
import { paymentLoaders, paymentResolvers } from './resolvers';
import { mountWebhook, paymentRoutes } from './routes';
import { PaymentService } from './service';
import { WebhookHandler } from './webhook';
import { PaymentWatch } from './live';

export interface PaymentServiceDeps extends ServiceDeps {
  provider?: PaymentProvider;
  directory?: CheckoutDirectory;
}

export function createPaymentService(deps: PaymentServiceDeps) {
  return buildService(deps, {
    name: 'payment',
    description: 'Checkouts, payments and the Stripe webhook',
    dir: __dirname,
    basePath: '/api/payments',
    entities: [Payment, PaymentItem, ProviderEvent, Refund],
    migrations: [CreatePayments1732000000500, CreateRefunds1732000000510, PaymentTraceContext1732000000520, StockHolds1732000000530],
    build: ({ config, db, logger, verifier, events, bus }) => {
      const provider = deps.provider ?? stripeProvider(config.stripe);
      // Read at call time: in tests the other services' ports are known only after they start.
      const directory =
        deps.directory ??
        httpCheckoutDirectory(
          {
            get book() {
              return config.urls.book;
            },
            get user() {
              return config.urls.user;
            },
          },
          config.internalApiKey,
        );
      const holds = new CheckoutHolds(db, provider, directory, logger);
      const payments = new PaymentService(db, provider, directory, config.stripe.currency, logger, holds, config.requireVerifiedEmail);
      const webhooks = new WebhookHandler(db, provider, logger);
      const refunds = new Refunds(db, provider, logger);
      const watch = new PaymentWatch(db, verifier, logger);
      return {
        routes: paymentRoutes(payments, refunds, verifier, watch),
        mountRaw: (app) => mountWebhook(app, webhooks),
        subgraph: { resolvers: paymentResolvers(refunds), loaders: paymentLoaders(payments) },
        consumers: () => [...paymentConsumers(events, refunds), watch.follow(bus)],
        registerMetrics: (registry) => registerRefundMetrics(registry, db, logger),
        afterStart: () => holds.start(),
        beforeStop: () => holds.stop(),
        expose: { payments, refunds, holds },
      };
    },
  });
}
