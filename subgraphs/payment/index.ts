/** Builds the payment service (REST routes, subgraph, webhook, Stripe, outbox relay, order-created and order-cancelled consumers). */
import path from 'node:path';
import { openDatabase } from '../../platform/database';
import { ProcessedEvent } from '../../platform/events/consumer';
import { OutboxEvent, OutboxRelay } from '../../platform/events/outbox';
import { EventTables1732000000000 } from '../../platform/migrations/1732000000000-EventTables';
import type { ProcessDeps } from '../../platform/run';
import { assembleService, type BookstoreService } from '../../rest-compat/service';
import { jwksVerifierFor } from '../../platform/auth';
import { httpCheckoutDirectory, type CheckoutDirectory } from './clients';
import { Payment, PaymentItem, ProviderEvent, Refund } from './entities';
import { subscribePaymentEvents } from './events';
import { CreatePayments1732000000500 } from './migrations/1732000000500-CreatePayments';
import { CreateRefunds1732000000510 } from './migrations/1732000000510-CreateRefunds';
import { stripeProvider, type PaymentProvider } from './provider';
import { Refunds } from './refunds';
import { paymentLoaders, paymentResolvers } from './resolvers';
import { mountWebhook, paymentRoutes } from './routes';
import { PaymentService } from './service';
import { WebhookHandler } from './webhook';

export interface PaymentServiceDeps extends ProcessDeps {
  provider?: PaymentProvider;
  directory?: CheckoutDirectory;
}

export async function createPaymentService(deps: PaymentServiceDeps): Promise<BookstoreService & { payments: PaymentService; refunds: Refunds }> {
  const { config, bus } = deps;
  const logger = deps.logger.child({ service: 'payment' });
  const provider = deps.provider ?? stripeProvider(config.stripe);
  const db = await openDatabase({
    service: 'payment',
    config,
    entities: [Payment, PaymentItem, ProviderEvent, Refund, OutboxEvent, ProcessedEvent],
    migrations: [EventTables1732000000000, CreatePayments1732000000500, CreateRefunds1732000000510],
  });
  const relay = new OutboxRelay({ db, bus, logger });
  const wake = () => relay.wake();
  // Read at call time: in tests the other services' ports are known only after they start.
  const directory =
    deps.directory ??
    httpCheckoutDirectory({
      get book() {
        return config.urls.book;
      },
      get user() {
        return config.urls.user;
      },
    });
  const payments = new PaymentService(db, provider, directory, config.stripe.currency, logger, wake);
  const webhooks = new WebhookHandler(db, provider, logger, wake);
  const refunds = new Refunds(db, provider, logger, wake);
  const verifier = jwksVerifierFor(config, { bus, logger, service: 'payment' });
  const runtime = await assembleService({
    name: 'payment',
    description: 'Checkouts, payments and the Stripe webhook',
    db,
    logger,
    bus,
    mountRaw: (app) => mountWebhook(app, webhooks),
    basePath: '/api/payments',
    routes: paymentRoutes(payments, refunds, verifier),
    subgraph: { schemaFile: path.join(__dirname, 'schema.graphql'), resolvers: paymentResolvers(refunds), loaders: paymentLoaders(payments), verifier },
    relay,
    subscribe: () => subscribePaymentEvents(bus, db, logger, refunds),
  });
  return Object.assign(runtime, { payments, refunds });
}
