import { randomUUID } from 'node:crypto';
import express from 'express';
import Stripe from 'stripe';
import { listen, type Listening } from '../../platform/http';
import { createLogger } from '../../platform/logger';
import { waitFor } from '../../test/wait';
import { createStripeSimulator, type ControlResult, type EventDelivery, type StripeSimulator } from './simulator';

const API_KEY = 'sk_test_simulator_suite';
const WEBHOOK_SECRET = 'whsec_simulator_suite';
const logger = createLogger(process.env.LOG_LEVEL ?? 'silent');

/** A webhook endpoint as the payment service will have one: raw body, verified by the real SDK. */
interface Received {
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

function sdk(port: number, config: Stripe.StripeConfig = {}, key = API_KEY): Stripe {
  return new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, telemetry: false, ...config });
}

let simulator: StripeSimulator;
let base: string;
let stripe: Stripe;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(new Stripe('sk_test_verifier_only'));
  simulator = createStripeSimulator({ webhookUrl: () => receiver.url, webhookSecret: WEBHOOK_SECRET, logger });
  const port = await simulator.start(0, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
  stripe = sdk(port);
});
afterAll(async () => {
  await simulator?.stop();
  await receiver?.close();
});
afterEach(() => {
  simulator.injectFaults({ failNext: 0, delayMs: 0, status: 500, refuseRefunds: 0 });
  receiver.failNext = 0;
});

/** Calls the control API: POST with a JSON body, or GET when `method` says so. */
async function control(path: string, body: unknown = {}, method: 'GET' | 'POST' = 'POST'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/simulator${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: method === 'GET' ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

function createIntent(overrides: Partial<Stripe.PaymentIntentCreateParams> = {}, options?: Stripe.RequestOptions) {
  const checkoutId = randomUUID();
  return stripe.paymentIntents.create({ amount: 4599, currency: 'usd', metadata: { checkoutId, paymentId: randomUUID(), userId: randomUUID() }, ...overrides }, options);
}

/** Waits until `find` returns something, and returns it. */
async function eventually<T>(find: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  return await waitFor(find, { what });
}

/** Every verified delivery of `eventId` the receiver got. */
function receivedEvents(eventId: string): Received[] {
  return receiver.received.filter((r) => r.event?.id === eventId);
}

function expectStripeEvent(delivery: EventDelivery, type: string, objectId: string): Stripe.Event {
  const [received] = receivedEvents(delivery.id);
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
}

describe('Stripe API through the real SDK', () => {
  it('creates a PaymentIntent from the form-encoded body the SDK sends and retrieves it', async () => {
    const metadata = { checkoutId: randomUUID(), paymentId: randomUUID(), userId: randomUUID() };

    const before = Math.floor(Date.now() / 1000);
    const created = await stripe.paymentIntents.create({
      amount: 4599,
      currency: 'USD',
      metadata,
      description: 'Bookstore checkout',
      automatic_payment_methods: { enabled: true },
    });

    expect(created).toMatchObject({
      object: 'payment_intent',
      amount: 4599,
      amount_received: 0,
      currency: 'usd',
      status: 'requires_payment_method',
      metadata,
      description: 'Bookstore checkout',
      livemode: false,
      latest_charge: null,
      last_payment_error: null,
      automatic_payment_methods: { enabled: true },
    });
    expect(created.id).toMatch(/^pi_[A-Za-z0-9]{24}$/);
    expect(created.client_secret).toMatch(new RegExp(`^${created.id}_secret_[A-Za-z0-9]+$`));
    // Stamped when it was made, in Unix seconds: between the moments before and after the call.
    expect(created.created).toBeGreaterThanOrEqual(before);
    expect(created.created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(created.lastResponse.requestId).toMatch(/^req_/);

    const retrieved = await stripe.paymentIntents.retrieve(created.id);
    const { lastResponse: _created, ...createdFields } = created;
    const { lastResponse: _retrieved, ...retrievedFields } = retrieved;
    expect(retrievedFields).toEqual(createdFields);
    expect(simulator.intents().map((i) => i.id)).toContain(created.id);
  });

  it('answers 404 resource_missing for an unknown PaymentIntent', async () => {
    const error = await stripe.paymentIntents.retrieve('pi_doesnotexist000000000000').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ statusCode: 404, type: 'StripeInvalidRequestError', code: 'resource_missing', param: 'intent' });
  });

  it('rejects an amount that is not a positive integer and a missing currency, naming the parameter', async () => {
    const zero = await stripe.paymentIntents.create({ amount: 0, currency: 'usd' }).catch((e: unknown) => e);
    const fraction = await stripe.paymentIntents.create({ amount: 12.5, currency: 'usd' }).catch((e: unknown) => e);
    const noCurrency = await stripe.paymentIntents.create({ amount: 100 } as Stripe.PaymentIntentCreateParams).catch((e: unknown) => e);

    expect(zero).toMatchObject({ statusCode: 400, code: 'amount_too_small', param: 'amount' });
    expect(fraction).toMatchObject({ statusCode: 400, code: 'parameter_invalid_integer', param: 'amount' });
    expect(noCurrency).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(noCurrency).toMatchObject({ statusCode: 400, code: 'parameter_missing', param: 'currency' });
  });

  it('replays the first answer for the same Idempotency-Key and parameters, creating nothing', async () => {
    const idempotencyKey = randomUUID();
    const params: Stripe.PaymentIntentCreateParams = { amount: 1250, currency: 'usd', metadata: { checkoutId: idempotencyKey } };
    const first = await stripe.paymentIntents.create(params, { idempotencyKey });
    const count = simulator.intents().length;

    const replay = await stripe.paymentIntents.create(params, { idempotencyKey });

    expect(replay.id).toBe(first.id);
    expect(replay.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(first.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    expect(simulator.intents()).toHaveLength(count);
  });

  it('answers 400 idempotency_error when the key is reused with different parameters', async () => {
    const idempotencyKey = randomUUID();
    await createIntent({ amount: 1000 }, { idempotencyKey });

    const error = await createIntent({ amount: 2000 }, { idempotencyKey }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(error).toMatchObject({ statusCode: 400, rawType: 'idempotency_error' });
    expect((error as Error).message).toContain('same parameters');
  });

  it('executes one of 20 concurrent creates with one Idempotency-Key, refuses with 409 those that come while it runs, and replays it after', async () => {
    // Latency keeps the first request executing while the others arrive.
    simulator.injectFaults({ delayMs: 200 });
    const idempotencyKey = randomUUID();
    const params: Stripe.PaymentIntentCreateParams = { amount: 3100, currency: 'eur', metadata: { checkoutId: idempotencyKey } };

    const results = await Promise.all(Array.from({ length: 20 }, () => stripe.paymentIntents.create(params, { idempotencyKey }).catch((error: unknown) => error)));

    // The SDK's agent may hold some requests back until a socket is free: those reach the simulator
    // after the first one finished and get its replay. Every other one came while it ran: refused.
    const answered = results.filter((r): r is Stripe.Response<Stripe.PaymentIntent> => !(r instanceof Error));
    const refused = results.filter((r) => r instanceof Error);
    const executed = answered.filter((r) => r.lastResponse.headers['idempotent-replayed'] !== 'true');
    expect(executed).toHaveLength(1);
    expect(new Set(answered.map((r) => r.id))).toEqual(new Set([executed[0].id]));
    expect(refused.length).toBeGreaterThan(0);
    for (const error of refused) {
      // stripe-node makes a StripeIdempotencyError of a 400 only; a 409 stays a StripeAPIError.
      expect(error).toBeInstanceOf(Stripe.errors.StripeAPIError);
      expect(error).toMatchObject({ statusCode: 409, rawType: 'idempotency_error' });
      expect(error.message).toContain('another in-progress request using this Idempotent Key');
    }
    expect(simulator.intents().filter((i) => i.metadata.checkoutId === idempotencyKey)).toHaveLength(1);

    const replay = await stripe.paymentIntents.create(params, { idempotencyKey });
    expect(replay.id).toBe(executed[0].id);
    expect(replay.lastResponse.headers['idempotent-replayed']).toBe('true');
  });

  it("lets the SDK retry a 409 in-flight refusal with the same key when maxNetworkRetries allows, and get the first request's answer", async () => {
    const retrying = sdk(Number(new URL(base).port), { maxNetworkRetries: 2 });
    simulator.injectFaults({ delayMs: 100 });
    const idempotencyKey = randomUUID();
    const params: Stripe.PaymentIntentCreateParams = { amount: 1200, currency: 'usd', metadata: { checkoutId: idempotencyKey } };

    const results = await Promise.all(Array.from({ length: 5 }, () => retrying.paymentIntents.create(params, { idempotencyKey })));

    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.lastResponse.headers['idempotent-replayed'] === 'true')).toHaveLength(4);
    expect(simulator.intents().filter((i) => i.metadata.checkoutId === idempotencyKey)).toHaveLength(1);
  });

  it('surfaces injected faults as StripeAPIError, then serves the calls after them', async () => {
    const set = await control('/faults', { failNext: 2, status: 500 });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ failNext: 2, status: 500, delayMs: 0, refuseRefunds: 0 });

    const first = await createIntent().catch((e: unknown) => e);
    const second = await stripe.paymentIntents.retrieve('pi_any').catch((e: unknown) => e);
    const third = await createIntent();

    expect(first).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(first).toMatchObject({ statusCode: 500, rawType: 'api_error' });
    expect(second).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(third.status).toBe('requires_payment_method');
  });

  it('lets the SDK retry past a fault when maxNetworkRetries allows it', async () => {
    const retrying = sdk(Number(new URL(base).port), { maxNetworkRetries: 1 });
    simulator.injectFaults({ failNext: 1, status: 503 });

    const intent = await retrying.paymentIntents.create({ amount: 700, currency: 'usd' });

    expect(intent.status).toBe('requires_payment_method');
  });

  it('answers 401 without a secret key of the accepted prefix', async () => {
    const noKey = await fetch(`${base}/v1/payment_intents/pi_x`);
    const liveKey = await sdk(Number(new URL(base).port), {}, 'sk_live_not_accepted')
      .paymentIntents.retrieve('pi_x')
      .catch((e: unknown) => e);

    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({ error: { type: 'invalid_request_error', message: expect.stringContaining('did not provide an API key') } });
    expect(liveKey).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(liveKey).toMatchObject({ statusCode: 401 });
  });

  it('cancels through the API and sends payment_intent.canceled carrying the request', async () => {
    const intent = await createIntent();

    const canceled = await stripe.paymentIntents.cancel(intent.id, { cancellation_reason: 'requested_by_customer' });

    expect(canceled).toMatchObject({ id: intent.id, status: 'canceled', cancellation_reason: 'requested_by_customer' });
    const received = await eventually(
      () => receiver.received.find((r) => r.event?.type === 'payment_intent.canceled' && r.event.data.object.id === intent.id),
      'payment_intent.canceled for the canceled intent',
    );
    expect(received.event?.request).toEqual({ id: canceled.lastResponse.requestId, idempotency_key: expect.stringMatching(/^stripe-node-retry-/) });
    const again = await stripe.paymentIntents.cancel(intent.id).catch((e: unknown) => e);
    expect(again).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
  });
});

describe('control API and signed webhooks', () => {
  it('confirm succeeds the intent and delivers a payment_intent.succeeded the SDK verifies', async () => {
    const intent = await createIntent();

    const res = await control(`/payment_intents/${intent.id}/confirm`);

    expect(res.status).toBe(200);
    const result = res.body as ControlResult;
    expect(result.payment_intent).toMatchObject({ id: intent.id, status: 'succeeded', amount_received: 4599, latest_charge: expect.stringMatching(/^ch_/) });
    expect(result.event).toMatchObject({ type: 'payment_intent.succeeded', status: 'delivered', attempts: [{ attempt: 1, status: 200, error: null }] });
    const event = expectStripeEvent(result.event, 'payment_intent.succeeded', intent.id);
    expect(event.data.object).toMatchObject({ object: 'payment_intent', status: 'succeeded', metadata: intent.metadata });
    expect((await stripe.paymentIntents.retrieve(intent.id)).status).toBe('succeeded');
  });

  it('signs so that a tampered payload or another secret fails verification', async () => {
    const intent = await createIntent();
    const { body } = await control(`/payment_intents/${intent.id}/confirm`);
    const [received] = receivedEvents((body as ControlResult).event.id);

    expect(received.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const tampered = Buffer.from(received.raw.toString('utf8').replace('"amount": 4599', '"amount": 1'));
    expect(tampered.equals(received.raw)).toBe(false);
    expect(() => stripe.webhooks.constructEvent(tampered, received.signature, WEBHOOK_SECRET)).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(() => stripe.webhooks.constructEvent(received.raw, received.signature, 'whsec_other')).toThrow(Stripe.errors.StripeSignatureVerificationError);
  });

  it('fail records last_payment_error, delivers payment_intent.payment_failed, and still lets the customer pay', async () => {
    const intent = await createIntent();

    const res = await control(`/payment_intents/${intent.id}/fail`, { reason: 'insufficient_funds' });

    expect(res.status).toBe(200);
    const expected = { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', message: expect.any(String) };
    expect(res.body.payment_intent).toMatchObject({ status: 'requires_payment_method', last_payment_error: expected });
    const event = expectStripeEvent(res.body.event, 'payment_intent.payment_failed', intent.id);
    expect(event.data.object).toMatchObject({ last_payment_error: expected });

    const paid = await control(`/payment_intents/${intent.id}/confirm`);
    expect(paid.status).toBe(200);
    expect(paid.body.payment_intent).toMatchObject({ status: 'succeeded', last_payment_error: null });
  });

  it('cancel delivers payment_intent.canceled, after which confirm answers 400', async () => {
    const intent = await createIntent();

    const res = await control(`/payment_intents/${intent.id}/cancel`);

    expect(res.status).toBe(200);
    expect(res.body.payment_intent).toMatchObject({ status: 'canceled', canceled_at: expect.any(Number) });
    expectStripeEvent(res.body.event, 'payment_intent.canceled', intent.id);
    const confirm = await control(`/payment_intents/${intent.id}/confirm`);
    expect(confirm.status).toBe(400);
    expect(confirm.body).toEqual({ error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: expect.stringContaining('canceled') } });
  });

  it('refund delivers charge.refunded with the fully refunded charge, once', async () => {
    const intent = await createIntent();
    const unpaid = await control(`/payment_intents/${intent.id}/refund`);
    expect(unpaid.status).toBe(400);
    const { body: paid } = await control(`/payment_intents/${intent.id}/confirm`);

    const res = await control(`/payment_intents/${intent.id}/refund`);

    expect(res.status).toBe(200);
    const charge = { id: paid.payment_intent.latest_charge, object: 'charge', payment_intent: intent.id, amount: 4599, amount_refunded: 4599, refunded: true };
    expect(res.body.charge).toMatchObject(charge);
    expect(res.body.refund).toMatchObject({ object: 'refund', amount: 4599, payment_intent: intent.id, status: 'succeeded' });
    const event = expectStripeEvent(res.body.event, 'charge.refunded', charge.id);
    expect(event.data.object).toMatchObject(charge);
    const again = await control(`/payment_intents/${intent.id}/refund`);
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('charge_already_refunded');
  });

  it('refunds through the API with refunds.create and sends charge.refunded', async () => {
    const intent = await createIntent();
    await control(`/payment_intents/${intent.id}/confirm`);

    const refund = await stripe.refunds.create({ payment_intent: intent.id, metadata: { orderId: 'o-1' } }, { idempotencyKey: `refund-${intent.id}` });

    expect(refund).toMatchObject({ object: 'refund', amount: 4599, payment_intent: intent.id, status: 'succeeded' });
    // A retry with the same key is the same refund, not a second one (nor Stripe's "already refunded").
    const retried = await stripe.refunds.create({ payment_intent: intent.id, metadata: { orderId: 'o-1' } }, { idempotencyKey: `refund-${intent.id}` });
    expect(retried.id).toBe(refund.id);
    const listed = await control('/refunds', undefined, 'GET');
    expect(listed.body.data.filter((r: { payment_intent: string }) => r.payment_intent === intent.id)).toEqual([refund]);
    const received = await eventually(
      () => receiver.received.find((r) => r.event?.type === 'charge.refunded' && r.event.data.object.payment_intent === intent.id),
      'charge.refunded for the refunded intent',
    );
    expect(received.event?.data.object).toMatchObject({ amount_refunded: 4599, refunded: true });
  });

  it('refuses the next refund with 402 balance_insufficient, replays that for its key, and refunds under a new key', async () => {
    const intent = await createIntent();
    await control(`/payment_intents/${intent.id}/confirm`);
    const set = await control('/faults', { refuseRefunds: 1 });
    expect(set.body).toMatchObject({ refuseRefunds: 1 });

    const refuse = () => stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: `refused-${intent.id}` }).catch((e: unknown) => e);
    const refused = await refuse();
    expect(refused).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(refused).toMatchObject({ statusCode: 402, code: 'balance_insufficient' });
    expect(simulator.refunds().filter((r) => r.payment_intent === intent.id)).toEqual([]);
    expect(simulator.injectFaults({}).refuseRefunds).toBe(0);

    // Stripe keeps the refusal for its idempotency key: only a new key asks again.
    expect(await refuse()).toMatchObject({ statusCode: 402, code: 'balance_insufficient' });
    const refund = await stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: `again-${intent.id}` });
    expect(refund).toMatchObject({ status: 'succeeded', payment_intent: intent.id });
    expect(simulator.refunds().filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
  });

  it('answers 404 for a control action on an unknown intent', async () => {
    const res = await control('/payment_intents/pi_unknown/confirm');

    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
  });

  it('resend delivers the same event again and records the attempt', async () => {
    const intent = await createIntent();
    const { body } = await control(`/payment_intents/${intent.id}/confirm`);
    const eventId = (body as ControlResult).event.id;

    const res = await control(`/events/${eventId}/resend`);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: eventId,
      status: 'delivered',
      attempts: [
        { attempt: 1, status: 200 },
        { attempt: 2, status: 200 },
      ],
    });
    const deliveries = receivedEvents(eventId);
    expect(deliveries).toHaveLength(2);
    expect(deliveries[1].event).toEqual(deliveries[0].event);
  });

  it('retries a rejected delivery with back-off until the receiver accepts it', async () => {
    const intent = await createIntent();
    receiver.failNext = 2;

    const { body } = await control(`/payment_intents/${intent.id}/confirm`);

    expect(body.event).toMatchObject({ status: 'pending', attempts: [{ attempt: 1, status: 500, responseBody: 'try again' }] });
    const delivered = await eventually(async () => {
      const list = await control('/events', undefined, 'GET');
      return (list.body.data as EventDelivery[]).find((e) => e.id === body.event.id && e.status === 'delivered');
    }, 'the event to be delivered on a retry');
    expect(delivered.attempts.map((a) => a.status)).toEqual([500, 500, 200]);
    expect(receivedEvents(body.event.id)).toHaveLength(3);
  });

  it('rejects unknown fault settings and out-of-range values', async () => {
    expect((await control('/faults', { failNext: -1 })).status).toBe(400);
    expect((await control('/faults', { status: 200 })).status).toBe(400);
    expect((await control('/faults', { explode: true })).status).toBe(400);
    expect((await control('/faults', { refuseRefunds: -1 })).status).toBe(400);
  });
});

describe('delivery edge cases', () => {
  it('gives up after the configured attempts when the webhook URL refuses connections', async () => {
    const closed = await listen(express(), 0, '127.0.0.1');
    await closed.close();
    const isolated = createStripeSimulator({
      webhookUrl: () => `http://127.0.0.1:${closed.port}/webhook`,
      webhookSecret: WEBHOOK_SECRET,
      logger,
      webhookRetry: { attempts: 3, initialDelayMs: 10 },
    });
    const port = await isolated.start(0);
    try {
      const intent = await sdk(port).paymentIntents.create({ amount: 500, currency: 'usd' });
      const { event } = await isolated.confirm(intent.id);
      expect(event.attempts[0]).toMatchObject({ status: null, error: expect.stringMatching(/ECONNREFUSED|fetch failed/) });

      const failed = await eventually(() => isolated.deliveries().find((d) => d.id === event.id && d.status === 'failed'), 'the delivery to give up');
      expect(failed.attempts).toHaveLength(3);
    } finally {
      await isolated.stop();
    }
  });

  it('records events without delivering them when no webhook URL is configured', async () => {
    const isolated = createStripeSimulator({ webhookUrl: () => undefined, webhookSecret: WEBHOOK_SECRET, logger });
    const port = await isolated.start(0);
    try {
      const intent = await sdk(port).paymentIntents.create({ amount: 500, currency: 'usd' });

      const { event } = await isolated.confirm(intent.id);

      expect(event).toMatchObject({ status: 'not_configured', attempts: [] });
      expect(isolated.events().map((e) => e.type)).toEqual(['payment_intent.succeeded']);
    } finally {
      await isolated.stop();
    }
  });
});
