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
   * Cancels a PaymentIntent so that it can no longer be paid (an abandoned checkout, CONTRACT §4);
   * resolves with the status it is left in: `canceled`, or the status that made it too late
   * (`succeeded`, `processing`: the money is coming). A passing failure is a 502 AppError.
   */
  cancelIntent(paymentIntentId: string): Promise<Stripe.PaymentIntent.Status>;
  /**
   * Refunds `amountCents` of a PaymentIntent; resolves with the provider's refund, or with
   * `undefined` when the provider says the charge was already refunded in full. A refusal for good
   * (more than is left among them) is a `RefundRefused`; a passing failure (5xx, network, rate
   * limit, a request in flight on the key) is a 502 AppError.
   */
  refund(request: {
    paymentIntentId: string;
    amountCents: number;
    reason?: ProviderRefundReason;
    metadata: Record<string, string>;
    idempotencyKey: string;
  }): Promise<ProviderRefund | undefined>;
  /** The verified event, or a 400 AppError "Invalid webhook signature". */
  verifyWebhook(rawBody: Buffer, signature: string | undefined): Stripe.Event;
}

/** The reasons Stripe knows; ours without a match (DAMAGED, OTHER) go without one, in the metadata. */
export type ProviderRefundReason = 'duplicate' | 'fraudulent' | 'requested_by_customer';

export interface ProviderRefund {
  id: string;
  /** True when the provider says the money is back (Stripe's `succeeded`); else the webhook settles it. */
  succeeded: boolean;
  /** True when the provider says the refund failed (`failed`, `canceled`): it holds nothing. */
  failed: boolean;
}

/**
 * The provider refused a refund for good: asking again with the same request will not help. `code`
 * is the provider's error code (or type), `reason` a fixed text safe to show an admin; the
 * provider's own message travels only as the cause, which is logged.
 */
export class RefundRefused extends Error {
  constructor(
    readonly code: string,
    readonly reason: string,
    options: { cause: unknown },
  ) {
    super(`The payment provider refused the refund: ${code}`, options);
    this.name = 'RefundRefused';
  }
}

/** Why a refund was refused, for the codes an operator meets most; anything else by its status. */
const REFUSAL_REASONS: Record<string, string> = {
  balance_insufficient: 'The account balance cannot cover the refund',
  charge_disputed: 'The charge is disputed',
  charge_expired_for_refund: 'The charge is too old to refund',
  charge_not_refundable: 'The charge cannot be refunded',
  amount_too_large: 'The refund is more than the charge has left unrefunded',
};

/**
 * A failure is passing when asking again later may succeed: no answer at all (network), a 5xx,
 * 429 (rate limit) or 409 (another request in flight on the idempotency key). Every other 4xx is
 * the provider's final word on this request.
 */
export function isPassingFailure(error: unknown): boolean {
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status !== 'number' || status >= 500 || status === 429 || status === 409 || status < 400;
}

function refusal(error: unknown): RefundRefused {
  const raw = error as { statusCode?: number; code?: unknown; rawType?: unknown; type?: unknown };
  const given = firstCode(raw.code, raw.rawType, raw.type) ?? 'refused';
  return new RefundRefused(given, REFUSAL_REASONS[given] ?? `The payment provider refused the refund (HTTP ${String(raw.statusCode)})`, { cause: error });
}

/** A provider code as we store it: short, lower-case words, so nothing else rides along. */
function firstCode(...values: unknown[]): string | undefined {
  return values.find((value): value is string => typeof value === 'string' && /^[a-z0-9_]{1,64}$/.test(value));
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

/** How long a call waits, in all, for another request with its idempotency key to finish. */
const IN_FLIGHT_PATIENCE_MS = 15_000;

/** Stripe's refusal of a request whose Idempotency-Key another request still holds: nothing was done. */
function isKeyInFlight(error: unknown): boolean {
  const { statusCode, rawType } = error as { statusCode?: unknown; rawType?: unknown };
  return statusCode === 409 && rawType === 'idempotency_error';
}

/**
 * Runs `call` again, with back-off, while Stripe answers that its idempotency key is in flight
 * (concurrent identical checkouts or refunds), so that each gets the first request's answer once it
 * is done. The SDK retries a 409 too, but only `maxNetworkRetries` times.
 */
async function awaitingKeyInFlight<T>(call: () => Promise<T>, patienceMs = IN_FLIGHT_PATIENCE_MS): Promise<T> {
  const deadline = Date.now() + patienceMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    try {
      return await call();
    } catch (error) {
      if (!isKeyInFlight(error) || Date.now() + delay > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay / 2 + Math.random() * (delay / 2)));
    }
  }
}

export function stripeProvider(settings: Config['stripe']): PaymentProvider {
  const stripe = stripeClient(settings);
  const webhookSecret = settings.webhookSecret;
  if (!webhookSecret) throw new ConfigError('STRIPE_WEBHOOK_SECRET must be set');
  return {
    async createIntent({ amountCents, currency, metadata, idempotencyKey }) {
      try {
        const intent = await awaitingKeyInFlight(() =>
          stripe.paymentIntents.create({ amount: amountCents, currency, metadata, automatic_payment_methods: { enabled: true } }, { idempotencyKey }),
        );
        if (!intent.client_secret) throw new Error('PaymentIntent without client_secret');
        return { id: intent.id, clientSecret: intent.client_secret };
      } catch (error) {
        throw providerFailed(error);
      }
    },
    async cancelIntent(paymentIntentId) {
      try {
        return (await stripe.paymentIntents.cancel(paymentIntentId, { cancellation_reason: 'abandoned' })).status;
      } catch (error) {
        // Canceled already, or past the point of cancelling: its status says which.
        if ((error as { code?: unknown }).code !== 'payment_intent_unexpected_state') throw providerFailed(error);
      }
      try {
        return (await stripe.paymentIntents.retrieve(paymentIntentId)).status;
      } catch (error) {
        throw providerFailed(error);
      }
    },
    async refund({ paymentIntentId, amountCents, reason, metadata, idempotencyKey }) {
      try {
        const refund = await awaitingKeyInFlight(() => stripe.refunds.create({ payment_intent: paymentIntentId, amount: amountCents, reason, metadata }, { idempotencyKey }));
        return { id: refund.id, succeeded: refund.status === 'succeeded', failed: refund.status === 'failed' || refund.status === 'canceled' };
      } catch (error) {
        if ((error as { code?: unknown }).code === 'charge_already_refunded') return undefined;
        throw isPassingFailure(error) ? providerFailed(error) : refusal(error);
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
