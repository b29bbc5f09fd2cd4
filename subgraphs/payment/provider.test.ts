/**
 * The provider against a Stripe that refuses a request whose Idempotency-Key is still in flight
 * (409): concurrent identical calls each get the first one's answer, and the provider's ledger shows
 * one object.
 */
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../platform/logger';
import { createStripeSimulator, type StripeSimulator } from '../../simulators/stripe/simulator';
import { stripeProvider, type PaymentProvider } from './provider';

let simulator: StripeSimulator;
let provider: PaymentProvider;

beforeAll(async () => {
  simulator = createStripeSimulator({ webhookUrl: () => undefined, webhookSecret: 'whsec_provider_suite', logger: createLogger('silent') });
  const port = await simulator.start(0);
  provider = stripeProvider({ secretKey: 'sk_test_provider_suite', webhookSecret: 'whsec_provider_suite', apiUrl: `http://127.0.0.1:${port}`, currency: 'usd', simulatorPort: 0 });
});
afterAll(() => simulator?.stop());
afterEach(() => void simulator.injectFaults({ delayMs: 0 }));

it('gives 10 concurrent refunds with one idempotency key the one refund, while Stripe is slower than the SDK retries', async () => {
  const intent = await provider.createIntent({ amountCents: 1500, currency: 'usd', metadata: {}, idempotencyKey: randomUUID() });
  await simulator.confirm(intent.id);
  simulator.injectFaults({ delayMs: 1500 });
  const idempotencyKey = `order-cancelled-refund-${randomUUID()}`;

  const refunds = await Promise.all(Array.from({ length: 10 }, () => provider.refund({ paymentIntentId: intent.id, amountCents: 1500, metadata: {}, idempotencyKey })));

  expect(new Set(refunds.map((refund) => refund?.id)).size).toBe(1);
  expect(refunds[0]?.id).toMatch(/^re_/);
  expect(simulator.refunds().filter((refund) => refund.payment_intent === intent.id)).toHaveLength(1);
});
