/**
 * A test file of the Stripe simulator: the simulator on port 0, a webhook endpoint that verifies
 * every delivery with the real SDK, the SDK pointed at the simulator, and its control API. Started
 * before the file's tests (jest's hooks), its faults cleared after each.
 */
import { randomUUID } from 'node:crypto';
import express from 'express';
import Stripe from 'stripe';
import { listen, type Listening } from '../platform/http';
import { createLogger } from '../platform/logger';
import { createStripeSimulator, type EventDelivery, type StripeSimulator } from '../simulators/stripe/simulator';
import { waitFor } from './wait';

const API_KEY = 'sk_test_simulator_suite';
export const WEBHOOK_SECRET = 'whsec_simulator_suite';
export const logger = createLogger(process.env.LOG_LEVEL ?? 'silent');

/** A webhook endpoint as the payment service will have one: raw body, verified by the real SDK. */
export interface Received {
  raw: Buffer;
  signature: string;
  event: Stripe.Event | null;
  error: string | null;
}

interface Receiver {
  url: string;
  received: Received[];
  /** Answers 500 to this many deliveries before accepting again. */
  failNext: number;
  close(): Promise<void>;
}

async function startReceiver(verifier: Stripe): Promise<Receiver> {
  const app = express();
  const receiver = { received: [] as Received[], failNext: 0 };
  app.post('/webhook', express.raw({ type: 'application/json' }), (req, res) => {
    const signature = req.get('Stripe-Signature') ?? '';
    const entry: Received = { raw: req.body as Buffer, signature, event: null, error: null };
    receiver.received.push(entry);
    try {
      entry.event = verifier.webhooks.constructEvent(entry.raw, signature, WEBHOOK_SECRET);
    } catch (error) {
      entry.error = (error as Error).message;
      res.status(400).send('bad signature');
      return;
    }
    if (receiver.failNext > 0) {
      receiver.failNext -= 1;
      res.status(500).send('try again');
      return;
    }
    res.type('text/plain').send('Webhook received');
  });
  const listening: Listening = await listen(app, 0, '127.0.0.1');
  return Object.assign(receiver, { url: `http://127.0.0.1:${listening.port}/webhook`, close: () => listening.close() });
}

export function sdk(port: number, config: Stripe.StripeConfig = {}, key = API_KEY): Stripe {
  return new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, telemetry: false, ...config });
}

export interface SimulatorSuite {
  /** Set once the file's tests run. */
  simulator: StripeSimulator;
  /** The simulator's base URL. */
  base: string;
  /** The SDK, pointed at the simulator. */
  stripe: Stripe;
  receiver: Receiver;
  /** Calls the control API: POST with a JSON body, or GET when `method` says so. */
  control: (path: string, body?: unknown, method?: 'GET' | 'POST') => Promise<{ status: number; body: any }>;
  /** A PaymentIntent of 45.99 USD with the metadata a checkout gives it. */
  createIntent: (overrides?: Partial<Stripe.PaymentIntentCreateParams>, options?: Stripe.RequestOptions) => Promise<Stripe.Response<Stripe.PaymentIntent>>;
  /** Every verified delivery of `eventId` the receiver got. */
  receivedEvents: (eventId: string) => Received[];
  /** Asserts the receiver got `delivery` once, verified, as the Stripe event of `type` about `objectId`, and returns it. */
  expectStripeEvent: (delivery: EventDelivery, type: string, objectId: string) => Stripe.Event;
}

export function simulatorSuite(): SimulatorSuite {
  const setup = {
    control: async (path, body = {}, method = 'POST') => {
      const res = await fetch(`${setup.base}/simulator${path}`, {
        method,
        headers: { 'Content-Type': 'application/json' },
        body: method === 'GET' ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    },
    createIntent: (overrides = {}, options) => {
      const checkoutId = randomUUID();
      return setup.stripe.paymentIntents.create({ amount: 4599, currency: 'usd', metadata: { checkoutId, paymentId: randomUUID(), userId: randomUUID() }, ...overrides }, options);
    },
    receivedEvents: (eventId) => setup.receiver.received.filter((r) => r.event?.id === eventId),
    expectStripeEvent: (delivery, type, objectId) => {
      const [received] = setup.receivedEvents(delivery.id);
      expect(received).toBeDefined();
      expect(received.error).toBeNull();
      const event = received.event as Stripe.Event;
      expect(event).toEqual({
        id: expect.stringMatching(/^evt_[A-Za-z0-9]{24}$/),
        object: 'event',
        api_version: expect.any(String),
        created: expect.any(Number),
        type,
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        data: { object: expect.objectContaining({ id: objectId }) },
      });
      return event;
    },
  } as SimulatorSuite;
  beforeAll(async () => {
    setup.receiver = await startReceiver(new Stripe('sk_test_verifier_only'));
    setup.simulator = createStripeSimulator({ webhookUrl: () => setup.receiver.url, webhookSecret: WEBHOOK_SECRET, logger });
    const port = await setup.simulator.start(0, '127.0.0.1');
    setup.base = `http://127.0.0.1:${port}`;
    setup.stripe = sdk(port);
  });
  afterAll(async () => {
    await setup.simulator?.stop();
    await setup.receiver?.close();
  });
  afterEach(() => {
    setup.simulator.injectFaults({ failNext: 0, delayMs: 0, status: 500, refuseRefunds: 0, pendingRefunds: 0, dropRefundAnswers: 0 });
    setup.receiver.failNext = 0;
  });
  return setup;
}

/** Waits until `find` returns something, and returns it. */
export async function eventually<T>(find: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  return await waitFor(find, { what });
}
