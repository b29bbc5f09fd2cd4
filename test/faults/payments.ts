/**
 * A payment service outside the test stack (its own process, or one started in the test after
 * another died), on the stack's database and bus, with a Stripe simulator that counts the
 * PaymentIntent creations it has been asked for, so a test can strike while one is under way.
 */
import express from 'express';
import { openDatabase, type Database } from '../../platform/database';
import { OutboxEvent } from '../../platform/events/outbox';
import { listen } from '../../platform/http';
import { createLogger } from '../../platform/logger';
import { createPaymentService } from '../../subgraphs/payment';
import { Payment, PaymentItem } from '../../subgraphs/payment/entities';
import { createStripeSimulator, type PaymentIntent, type StripeSimulator } from '../../simulators/stripe/simulator';
import { INTERNAL_KEY, WEBHOOK_SECRET, type Stack } from '../stack';

const STRIPE_KEY = 'sk_test_faults';

export interface WatchedSimulator {
  simulator: StripeSimulator;
  url: string;
  /** `POST /v1/payment_intents` received so far, counted before any injected delay. */
  intentRequests(): number;
  intentsFor(checkoutId: string): PaymentIntent[];
  stop(): Promise<void>;
}

export async function watchedSimulator(webhookUrl: () => string | undefined, logLevel: string): Promise<WatchedSimulator> {
  const simulator = createStripeSimulator({ webhookUrl, webhookSecret: WEBHOOK_SECRET, logger: createLogger(logLevel) });
  let requests = 0;
  const app = express();
  app.use((req, _res, next) => {
    if (req.method === 'POST' && req.path === '/v1/payment_intents') requests += 1;
    next();
  });
  app.use(simulator.app);
  const listening = await listen(app, 0, '127.0.0.1');
  return {
    simulator,
    url: `http://127.0.0.1:${listening.port}`,
    intentRequests: () => requests,
    intentsFor: (checkoutId) => simulator.intents().filter((intent) => intent.metadata.checkoutId === checkoutId),
    async stop() {
      await simulator.stop();
      await listening.close();
    },
  };
}

/** The environment of a payment process that joins `stack`: its database, bus namespace and peers. */
export function paymentEnv(stack: Stack, stripeUrl: string): Record<string, string> {
  const { config } = stack;
  return {
    ...(config.dbUrl ? { DB_URL: config.dbUrl } : {}),
    ...(config.kafkaBrokers ? { KAFKA_BROKERS: config.kafkaBrokers.join(',') } : {}),
    DATA_DIR: config.dataDir,
    DB_PREFIX: config.dbPrefix,
    EVENT_NAMESPACE: config.eventNamespace,
    INTERNAL_API_KEY: INTERNAL_KEY,
    AUTH_URL: stack.urls.auth,
    USER_URL: stack.urls.user,
    BOOK_URL: stack.urls.book,
    STRIPE_API_URL: stripeUrl,
    STRIPE_SECRET_KEY: STRIPE_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
  };
}

/** Starts a payment service in this process on the stack's database and bus; `stack.stop()` stops it and drops its database. */
export async function startPaymentInProcess(stack: Stack, stripeUrl: string) {
  const config = { ...stack.config, stripe: { ...stack.config.stripe, apiUrl: stripeUrl, secretKey: STRIPE_KEY, webhookSecret: WEBHOOK_SECRET } };
  const service = await createPaymentService({ config, logger: createLogger(config.logLevel), bus: stack.bus });
  stack.services.payment = service;
  const port = await service.start(0, '127.0.0.1');
  stack.urls.payment = `http://127.0.0.1:${port}`;
  return service;
}

/** The payment database of `stack` as another process left it, to read back what it committed. */
export function paymentDatabase(stack: Stack): Promise<Database> {
  return openDatabase({ service: 'payment', config: stack.config, entities: [Payment, PaymentItem, OutboxEvent], migrations: [] });
}
