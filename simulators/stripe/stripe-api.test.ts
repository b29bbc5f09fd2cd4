/**
 * The Stripe simulator's API as the payment service's SDK sees it: PaymentIntents created, read and
 * cancelled through the real `stripe` package, its errors, idempotency keys and injected faults.
 */
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { eventually, sdk, simulatorSuite } from '../../test/stripe-simulator-suite';

const setup = simulatorSuite();
const { control, createIntent } = setup;

describe('Stripe API through the real SDK', () => {
  it('creates a PaymentIntent from the form-encoded body the SDK sends and retrieves it', async () => {
    const metadata = { checkoutId: randomUUID(), paymentId: randomUUID(), userId: randomUUID() };

    const before = Math.floor(Date.now() / 1000);
    const created = await setup.stripe.paymentIntents.create({
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

    const retrieved = await setup.stripe.paymentIntents.retrieve(created.id);
    const { lastResponse: _created, ...createdFields } = created;
    const { lastResponse: _retrieved, ...retrievedFields } = retrieved;
    expect(retrievedFields).toEqual(createdFields);
    expect(setup.simulator.intents().map((i) => i.id)).toContain(created.id);
  });

  it('answers 404 resource_missing for an unknown PaymentIntent', async () => {
    const error = await setup.stripe.paymentIntents.retrieve('pi_doesnotexist000000000000').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ statusCode: 404, type: 'StripeInvalidRequestError', code: 'resource_missing', param: 'intent' });
  });

  it('rejects an amount that is not a positive integer and a missing currency, naming the parameter', async () => {
    const zero = await setup.stripe.paymentIntents.create({ amount: 0, currency: 'usd' }).catch((e: unknown) => e);
    const fraction = await setup.stripe.paymentIntents.create({ amount: 12.5, currency: 'usd' }).catch((e: unknown) => e);
    const noCurrency = await setup.stripe.paymentIntents.create({ amount: 100 } as Stripe.PaymentIntentCreateParams).catch((e: unknown) => e);

    expect(zero).toMatchObject({ statusCode: 400, code: 'amount_too_small', param: 'amount' });
    expect(fraction).toMatchObject({ statusCode: 400, code: 'parameter_invalid_integer', param: 'amount' });
    expect(noCurrency).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(noCurrency).toMatchObject({ statusCode: 400, code: 'parameter_missing', param: 'currency' });
  });

  it('replays the first answer for the same Idempotency-Key and parameters, creating nothing', async () => {
    const idempotencyKey = randomUUID();
    const params: Stripe.PaymentIntentCreateParams = { amount: 1250, currency: 'usd', metadata: { checkoutId: idempotencyKey } };
    const first = await setup.stripe.paymentIntents.create(params, { idempotencyKey });
    const count = setup.simulator.intents().length;

    const replay = await setup.stripe.paymentIntents.create(params, { idempotencyKey });

    expect(replay.id).toBe(first.id);
    expect(replay.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(first.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    expect(setup.simulator.intents()).toHaveLength(count);
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
    setup.simulator.injectFaults({ delayMs: 200 });
    const idempotencyKey = randomUUID();
    const params: Stripe.PaymentIntentCreateParams = { amount: 3100, currency: 'eur', metadata: { checkoutId: idempotencyKey } };

    const results = await Promise.all(Array.from({ length: 20 }, () => setup.stripe.paymentIntents.create(params, { idempotencyKey }).catch((error: unknown) => error)));

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
    expect(setup.simulator.intents().filter((i) => i.metadata.checkoutId === idempotencyKey)).toHaveLength(1);

    const replay = await setup.stripe.paymentIntents.create(params, { idempotencyKey });
    expect(replay.id).toBe(executed[0].id);
    expect(replay.lastResponse.headers['idempotent-replayed']).toBe('true');
  });

  it("lets the SDK retry a 409 in-flight refusal with the same key when maxNetworkRetries allows, and get the first request's answer", async () => {
    const retrying = sdk(Number(new URL(setup.base).port), { maxNetworkRetries: 2 });
    setup.simulator.injectFaults({ delayMs: 100 });
    const idempotencyKey = randomUUID();
    const params: Stripe.PaymentIntentCreateParams = { amount: 1200, currency: 'usd', metadata: { checkoutId: idempotencyKey } };

    const results = await Promise.all(Array.from({ length: 5 }, () => retrying.paymentIntents.create(params, { idempotencyKey })));

    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.lastResponse.headers['idempotent-replayed'] === 'true')).toHaveLength(4);
    expect(setup.simulator.intents().filter((i) => i.metadata.checkoutId === idempotencyKey)).toHaveLength(1);
  });

  it('surfaces injected faults as StripeAPIError, then serves the calls after them', async () => {
    const set = await control('/faults', { failNext: 2, status: 500 });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ failNext: 2, status: 500, delayMs: 0, refuseRefunds: 0, pendingRefunds: 0, dropRefundAnswers: 0 });

    const first = await createIntent().catch((e: unknown) => e);
    const second = await setup.stripe.paymentIntents.retrieve('pi_any').catch((e: unknown) => e);
    const third = await createIntent();

    expect(first).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(first).toMatchObject({ statusCode: 500, rawType: 'api_error' });
    expect(second).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(third.status).toBe('requires_payment_method');
  });

  it('lets the SDK retry past a fault when maxNetworkRetries allows it', async () => {
    const retrying = sdk(Number(new URL(setup.base).port), { maxNetworkRetries: 1 });
    setup.simulator.injectFaults({ failNext: 1, status: 503 });

    const intent = await retrying.paymentIntents.create({ amount: 700, currency: 'usd' });

    expect(intent.status).toBe('requires_payment_method');
  });

  it('answers 401 without a secret key of the accepted prefix', async () => {
    const noKey = await fetch(`${setup.base}/v1/payment_intents/pi_x`);
    const liveKey = await sdk(Number(new URL(setup.base).port), {}, 'sk_live_not_accepted')
      .paymentIntents.retrieve('pi_x')
      .catch((e: unknown) => e);

    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({ error: { type: 'invalid_request_error', message: expect.stringContaining('did not provide an API key') } });
    expect(liveKey).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(liveKey).toMatchObject({ statusCode: 401 });
  });

  it('cancels through the API and sends payment_intent.canceled carrying the request', async () => {
    const intent = await createIntent();

    const canceled = await setup.stripe.paymentIntents.cancel(intent.id, { cancellation_reason: 'requested_by_customer' });

    expect(canceled).toMatchObject({ id: intent.id, status: 'canceled', cancellation_reason: 'requested_by_customer' });
    const received = await eventually(
      () => setup.receiver.received.find((r) => r.event?.type === 'payment_intent.canceled' && r.event.data.object.id === intent.id),
      'payment_intent.canceled for the canceled intent',
    );
    expect(received.event?.request).toEqual({ id: canceled.lastResponse.requestId, idempotency_key: expect.stringMatching(/^stripe-node-retry-/) });
    const again = await setup.stripe.paymentIntents.cancel(intent.id).catch((e: unknown) => e);
    expect(again).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
  });
});
