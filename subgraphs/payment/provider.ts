/**
 * Stripe, through its official SDK: the only file of the project that imports `stripe`. The SDK
 * talks to api.stripe.com, or to the built-in simulator when STRIPE_API_URL points there.
 */
import Stripe from 'stripe';
import { ConfigError, type Config } from '../../platform/config';
import { AppError } from '../../platform/errors';

export { Stripe };

export interface CreatedIntent {
  id: string;
  clientSecret: string;
}

export interface PaymentProvider {
  createIntent(request: { amountCents: number; currency: string; metadata: Record<string, string>; idempotencyKey: string }): Promise<CreatedIntent>;
  /**
   * Refunds a PaymentIntent in full; resolves with the refund's id, or with `undefined` when the
   * provider says the charge was already refunded. Any other failure is a 502 AppError.
   */
  refundInFull(request: { paymentIntentId: string; metadata: Record<string, string>; idempotencyKey: string }): Promise<string | undefined>;
  /** The verified event, or a 400 AppError "Invalid webhook signature". */
  verifyWebhook(rawBody: Buffer, signature: string | undefined): Stripe.Event;
}

export const WEBHOOK_TOLERANCE_SECONDS = 300;

export function stripeClient(settings: Config['stripe']): Stripe {
  if (!settings.secretKey) throw new ConfigError('STRIPE_SECRET_KEY must be set (or STRIPE_API_URL pointing at the simulator with a test key)');
  const api = settings.apiUrl ? new URL(settings.apiUrl) : undefined;
  return new Stripe(settings.secretKey, {
    ...(api ? { host: api.hostname, port: Number(api.port || (api.protocol === 'https:' ? 443 : 80)), protocol: api.protocol.replace(':', '') as 'http' | 'https' } : {}),
    telemetry: false,
    maxNetworkRetries: 1,
    timeout: 10_000,
  });
}

/**
 * A provider failure as the client sees it (CONTRACT §1.2): 502 with a fixed message. The provider's
 * own text may name accounts, keys or internals, so it travels only as the error's cause, which the
 * error handler logs.
 */
export function providerFailed(error: unknown): AppError {
  return Object.assign(new AppError('PAYMENT_PROVIDER_ERROR', 'The payment provider failed', 502), { cause: error });
}

export function stripeProvider(settings: Config['stripe']): PaymentProvider {
  const stripe = stripeClient(settings);
  const webhookSecret = settings.webhookSecret;
  if (!webhookSecret) throw new ConfigError('STRIPE_WEBHOOK_SECRET must be set');
  return {
    async createIntent({ amountCents, currency, metadata, idempotencyKey }) {
      try {
        const intent = await stripe.paymentIntents.create({ amount: amountCents, currency, metadata, automatic_payment_methods: { enabled: true } }, { idempotencyKey });
        if (!intent.client_secret) throw new Error('PaymentIntent without client_secret');
        return { id: intent.id, clientSecret: intent.client_secret };
      } catch (error) {
        throw providerFailed(error);
      }
    },
    async refundInFull({ paymentIntentId, metadata, idempotencyKey }) {
      try {
        const refund = await stripe.refunds.create({ payment_intent: paymentIntentId, reason: 'requested_by_customer', metadata }, { idempotencyKey });
        return refund.id;
      } catch (error) {
        if ((error as { code?: unknown }).code === 'charge_already_refunded') return undefined;
        throw providerFailed(error);
      }
    },
    verifyWebhook(rawBody, signature) {
      if (!signature) throw invalidSignature();
      try {
        return stripe.webhooks.constructEvent(rawBody, signature, webhookSecret, WEBHOOK_TOLERANCE_SECONDS);
      } catch {
        throw invalidSignature();
      }
    },
  };
}

const invalidSignature = () => new AppError('INVALID_WEBHOOK_SIGNATURE', 'Invalid webhook signature', 400);
