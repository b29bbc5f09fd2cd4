/**
 * A Stripe-compatible simulator: the `stripe` SDK's PaymentIntent and Refund calls under `/v1`, and a
 * control API under `/simulator` that plays the customer (pay, decline, abandon) and the merchant
 * (refund), each followed by a correctly signed webhook, so the purchase flow runs with no account.
 */
import express, { type Express, type RequestHandler, Router } from 'express';
import type { Server } from 'node:http';
import { closeServer, listen } from '../../platform/http';
import type { Logger } from '../../platform/logger';
import { Ledger } from './ledger';
import { type Charge, type PaymentIntent, type Refund, StripeApiError } from './objects';
import { type Faults, stripeApiRouter, stripeErrorHandler } from './stripe-api';
import { DEFAULT_RETRY, type EventDelivery, type RetryPolicy, type StripeEvent, WebhookDispatcher } from './webhooks';

export type { Charge, PaymentError, PaymentIntent, Refund } from './objects';
export type { DeliveryAttempt, DeliveryStatus, EventDelivery, StripeEvent, StripeEventType } from './webhooks';
export { signatureHeader } from './webhooks';

/** The API version stamped on events; the one `stripe@23.1.0` pins. The SDK's signature check ignores it. */
export const SIMULATOR_API_VERSION = '2026-10-28.endive';

export interface StripeSimulatorOptions {
  /** Where webhooks go; read at each delivery, so it may be known only once the payment service listens. */
  webhookUrl: () => string | undefined;
  webhookSecret: string;
  logger: Logger;
  /** Secret keys the API accepts; default `sk_test_`. */
  apiKeyPrefix?: string;
  apiVersion?: string;
  /** Webhook retries; default 5 attempts, 200 ms doubling, 10 s per attempt. */
  webhookRetry?: Partial<RetryPolicy>;
}

export interface FaultSettings {
  failNext?: number;
  status?: number;
  delayMs?: number;
  /** How many of the next refunds through the API are refused with Stripe's 402 `balance_insufficient`. */
  refuseRefunds?: number;
  /** How many of the next refunds through the API come back `pending` until settled through the control API. */
  pendingRefunds?: number;
  /** How many of the next answers to refund requests through the API are lost after the refund is made (the connection dropped). */
  dropRefundAnswers?: number;
}

/** What a control action answers: the objects it changed and the event, after its first delivery attempt. */
export interface ControlResult {
  payment_intent: PaymentIntent;
  charge?: Charge;
  refund?: Refund;
  event: EventDelivery;
}

export interface StripeSimulator {
  app: Express;
  /** Listens (default host 127.0.0.1: the control API has no authentication) and resolves with the port. */
  start(port: number, host?: string): Promise<number>;
  stop(): Promise<void>;
  confirm(id: string): Promise<ControlResult>;
  fail(id: string, reason?: string): Promise<ControlResult>;
  cancel(id: string): Promise<ControlResult>;
  refund(id: string): Promise<ControlResult>;
  /** The bank's answer to a pending refund, or its late failure of a succeeded one: `refund.updated` with it `succeeded` or `failed`. */
  settleRefund(id: string, outcome: 'succeeded' | 'failed'): Promise<{ refund: Refund; event: EventDelivery }>;
  resend(eventId: string): Promise<EventDelivery>;
  intents(): PaymentIntent[];
  /** Every refund made, through the API or the control API, oldest first. */
  refunds(): Refund[];
  events(): StripeEvent[];
  deliveries(): EventDelivery[];
  injectFaults(settings: FaultSettings): Faults;
}

const badControlRequest = (message: string, param?: string) => new StripeApiError(400, { type: 'invalid_request_error', message, ...(param ? { param } : {}) });

function validateFaults(settings: FaultSettings): void {
  const check = (name: keyof FaultSettings, min: number, max: number) => {
    const value = settings[name];
    if (value !== undefined && (!Number.isInteger(value) || value < min || value > max)) {
      throw badControlRequest(`${name} must be an integer from ${min} to ${max}`, name);
    }
  };
  check('failNext', 0, 1000);
  check('status', 400, 599);
  check('delayMs', 0, 60_000);
  check('refuseRefunds', 0, 1000);
  check('pendingRefunds', 0, 1000);
  check('dropRefundAnswers', 0, 1000);
}

export function createStripeSimulator(options: StripeSimulatorOptions): StripeSimulator {
  const logger = options.logger.child({ component: 'stripe-simulator' });
  const ledger = new Ledger();
  const faults: Faults = { failNext: 0, status: 500, delayMs: 0, refuseRefunds: 0, pendingRefunds: 0, dropRefundAnswers: 0 };
  const webhooks = new WebhookDispatcher({
    webhookUrl: options.webhookUrl,
    webhookSecret: options.webhookSecret,
    apiVersion: options.apiVersion ?? SIMULATOR_API_VERSION,
    logger,
    retry: { ...DEFAULT_RETRY, ...options.webhookRetry },
  });
  let server: Server | undefined;

  const simulator: StripeSimulator = {
    app: express(),

    async confirm(id) {
      const intent = ledger.succeed(id);
      logger.info({ paymentIntentId: id }, 'payment intent succeeded');
      return { payment_intent: intent, event: await webhooks.publish('payment_intent.succeeded', intent) };
    },

    async fail(id, reason) {
      const intent = ledger.fail(id, reason);
      logger.info({ paymentIntentId: id, code: intent.last_payment_error?.code }, 'payment attempt failed');
      return { payment_intent: intent, event: await webhooks.publish('payment_intent.payment_failed', intent) };
    },

    async cancel(id) {
      const intent = ledger.cancelPaymentIntent(id, { cancellation_reason: 'abandoned' });
      logger.info({ paymentIntentId: id }, 'payment intent canceled');
      return { payment_intent: intent, event: await webhooks.publish('payment_intent.canceled', intent) };
    },

    async refund(id) {
      const { refund, charge, paymentIntent } = ledger.refund({ payment_intent: id });
      logger.info({ paymentIntentId: id, chargeId: charge.id }, 'charge refunded');
      return { payment_intent: paymentIntent, charge, refund, event: await webhooks.publish('charge.refunded', charge) };
    },

    async settleRefund(id, outcome) {
      const { refund } = ledger.settleRefund(id, outcome);
      logger.info({ refundId: id, outcome }, 'pending refund settled');
      return { refund, event: await webhooks.publish('refund.updated', refund) };
    },

    async resend(eventId) {
      const delivery = await webhooks.resend(eventId);
      if (!delivery) throw new StripeApiError(404, { type: 'invalid_request_error', message: `No such event: '${eventId}'`, code: 'resource_missing', param: 'id' });
      return delivery;
    },

    intents: () => ledger.listPaymentIntents(),
    refunds: () => ledger.listRefunds(),
    events: () => webhooks.events(),
    deliveries: () => webhooks.list(),

    injectFaults(settings) {
      validateFaults(settings);
      if (settings.status !== undefined) faults.status = settings.status;
      if (settings.failNext !== undefined) faults.failNext = settings.failNext;
      if (settings.delayMs !== undefined) faults.delayMs = settings.delayMs;
      if (settings.refuseRefunds !== undefined) faults.refuseRefunds = settings.refuseRefunds;
      if (settings.pendingRefunds !== undefined) faults.pendingRefunds = settings.pendingRefunds;
      if (settings.dropRefundAnswers !== undefined) faults.dropRefundAnswers = settings.dropRefundAnswers;
      logger.info({ ...faults }, 'faults set');
      return { ...faults };
    },

    async start(port, host = '127.0.0.1') {
      const listening = await listen(simulator.app, port, host);
      server = listening.server;
      logger.info({ port: listening.port }, 'stripe simulator listening');
      return listening.port;
    },

    async stop() {
      webhooks.stop();
      if (server) await closeServer(server, 2000);
      server = undefined;
    },
  };

  const app = simulator.app;
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(
    '/v1',
    stripeApiRouter({
      ledger,
      faults,
      publish: (type, object, request) => webhooks.publish(type, object, request),
      apiKeyPrefix: options.apiKeyPrefix ?? 'sk_test_',
      logger,
    }),
  );
  app.use('/simulator', controlRouter(simulator));
  app.use((req, res) => {
    res.status(404).json({ error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${req.path}).` } });
  });
  app.use(stripeErrorHandler(logger));
  return simulator;
}

/** The control API, JSON in and out; not Stripe's, so it takes no API key. */
function controlRouter(simulator: StripeSimulator): Router {
  const router = Router();
  router.use(express.json({ limit: '64kb' }));

  const intentAction =
    (action: (id: string, body: Record<string, unknown>) => Promise<ControlResult>): RequestHandler =>
    async (req, res) => {
      res.json(await action(String(req.params.id), (req.body ?? {}) as Record<string, unknown>));
    };

  router.get('/payment_intents', (_req, res) => {
    res.json({ object: 'list', data: simulator.intents() });
  });
  router.post(
    '/payment_intents/:id/confirm',
    intentAction((id) => simulator.confirm(id)),
  );
  router.post(
    '/payment_intents/:id/fail',
    intentAction((id, body) => {
      if (body.reason !== undefined && typeof body.reason !== 'string') throw badControlRequest('reason must be a string', 'reason');
      return simulator.fail(id, body.reason);
    }),
  );
  router.post(
    '/payment_intents/:id/cancel',
    intentAction((id) => simulator.cancel(id)),
  );
  router.post(
    '/payment_intents/:id/refund',
    intentAction((id) => simulator.refund(id)),
  );
  router.post('/refunds/:id/succeed', async (req, res) => {
    res.json(await simulator.settleRefund(String(req.params.id), 'succeeded'));
  });
  router.post('/refunds/:id/fail', async (req, res) => {
    res.json(await simulator.settleRefund(String(req.params.id), 'failed'));
  });
  router.get('/refunds', (_req, res) => {
    res.json({ object: 'list', data: simulator.refunds() });
  });
  router.get('/events', (_req, res) => {
    res.json({ object: 'list', data: simulator.deliveries() });
  });
  router.post('/events/:id/resend', async (req, res) => {
    res.json(await simulator.resend(String(req.params.id)));
  });
  router.post('/faults', (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const unknown = Object.keys(body).find((name) => !['failNext', 'status', 'delayMs', 'refuseRefunds', 'pendingRefunds', 'dropRefundAnswers'].includes(name));
    if (unknown !== undefined) throw badControlRequest(`Unknown fault setting: ${unknown}`, unknown);
    res.json(simulator.injectFaults(body));
  });
  return router;
}
