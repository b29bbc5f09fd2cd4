/**
 * The simulator's state: PaymentIntents, their charges and refunds, and the transitions between
 * them. Parameters arrive as the SDK form-encodes them (every value a string) and are checked as
 * Stripe checks them; every failure is a `StripeApiError` the HTTP layers only render.
 */
import {
  type Charge,
  invalidParam,
  missing,
  type PaymentError,
  type PaymentIntent,
  type PaymentIntentStatus,
  type Refund,
  StripeApiError,
  stripeId,
  unexpectedState,
  unixNow,
} from './objects';

/** Stripe's parameter limits: 50 metadata keys, keys up to 40 characters, values up to 500. */
function parseMetadata(value: unknown): Record<string, string> {
  if (value === undefined || value === '') return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidParam('Invalid object', 'parameter_invalid_object', 'metadata');
  }
  const metadata: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') throw invalidParam('Metadata values must be strings.', 'parameter_invalid_string', `metadata[${key}]`);
    if (key.length > 40) throw invalidParam('Metadata keys can be at most 40 characters.', 'parameter_invalid_string', `metadata[${key}]`);
    if (entry.length > 500) throw invalidParam('Metadata values can be at most 500 characters.', 'parameter_invalid_string', `metadata[${key}]`);
    // An empty value unsets the key, as it does on Stripe.
    if (entry !== '') metadata[key] = entry;
  }
  if (Object.keys(metadata).length > 50) throw invalidParam('Metadata can have at most 50 keys.', 'parameter_invalid_object', 'metadata');
  return metadata;
}

/** A form-encoded integer: the SDK sends every value as a string. */
function parseAmount(value: unknown, param: string, required: boolean): number | undefined {
  if (value === undefined || value === '') {
    if (required) throw invalidParam(`Missing required param: ${param}.`, 'parameter_missing', param);
    return undefined;
  }
  if (typeof value !== 'string' || !/^-?\d+$/.test(value)) {
    throw invalidParam(`Invalid integer: ${typeof value === 'string' ? value : JSON.stringify(value)}`, 'parameter_invalid_integer', param);
  }
  const amount = Number(value);
  if (amount < 1) throw invalidParam('This value must be greater than or equal to 1.', 'amount_too_small', param);
  if (amount > 99_999_999) throw invalidParam('Amount must be no more than 99999999.', 'amount_too_large', param);
  return amount;
}

function optionalString(value: unknown, param: string): string | null {
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string') throw invalidParam(`Invalid string: ${param}`, 'parameter_invalid_string', param);
  return value;
}

function rejectUnknownParams(params: Record<string, unknown>, known: readonly string[]): void {
  const unknown = Object.keys(params).find((name) => !known.includes(name));
  if (unknown !== undefined) throw invalidParam(`Received unknown parameter: ${unknown}`, 'parameter_unknown', unknown);
}

const CREATE_PARAMS = ['amount', 'currency', 'metadata', 'description', 'automatic_payment_methods', 'payment_method_types', 'receipt_email', 'expand'];
const CANCELLATION_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'];
const CANCELABLE: PaymentIntentStatus[] = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action', 'processing'];
const REFUND_PARAMS = ['payment_intent', 'charge', 'amount', 'reason', 'metadata', 'expand'];

/** What a declined card looks like for a `fail` reason: a code of its own, or a decline code of `card_declined`. */
const FAILURES: Record<string, { code: string; message: string }> = {
  card_declined: { code: 'card_declined', message: 'Your card was declined.' },
  generic_decline: { code: 'card_declined', message: 'Your card was declined.' },
  insufficient_funds: { code: 'card_declined', message: 'Your card has insufficient funds.' },
  lost_card: { code: 'card_declined', message: 'Your card was declined.' },
  stolen_card: { code: 'card_declined', message: 'Your card was declined.' },
  expired_card: { code: 'expired_card', message: 'Your card has expired.' },
  incorrect_cvc: { code: 'incorrect_cvc', message: "Your card's security code is incorrect." },
  processing_error: { code: 'processing_error', message: 'An error occurred while processing your card. Try again in a little bit.' },
};

function paymentError(reason = 'card_declined'): PaymentError {
  const failure = FAILURES[reason];
  if (!failure) throw invalidParam(`Unknown failure reason: ${reason}. Use one of ${Object.keys(FAILURES).join(', ')}.`, 'parameter_invalid_string', 'reason');
  const declineCode = failure.code === 'card_declined' ? (reason === 'card_declined' ? 'generic_decline' : reason) : null;
  return { type: 'card_error', code: failure.code, decline_code: declineCode, message: failure.message };
}

const clone = <T>(value: T): T => structuredClone(value);

export class Ledger {
  private readonly intents = new Map<string, PaymentIntent>();
  private readonly charges = new Map<string, Charge>();
  private readonly refunds = new Map<string, Refund>();

  createPaymentIntent(params: Record<string, unknown>): PaymentIntent {
    rejectUnknownParams(params, CREATE_PARAMS);
    const amount = parseAmount(params.amount, 'amount', true) as number;
    if (typeof params.currency !== 'string' || params.currency === '') {
      throw invalidParam('Missing required param: currency.', 'parameter_missing', 'currency');
    }
    if (!/^[a-z]{3}$/i.test(params.currency)) {
      throw invalidParam(`Invalid currency: ${params.currency.toLowerCase()}.`, 'parameter_invalid_string', 'currency');
    }
    const methodTypes = params.payment_method_types;
    if (methodTypes !== undefined && (!Array.isArray(methodTypes) || !methodTypes.every((t) => typeof t === 'string'))) {
      throw invalidParam('Invalid array', 'parameter_invalid_array', 'payment_method_types');
    }
    const id = stripeId('pi');
    const intent: PaymentIntent = {
      id,
      object: 'payment_intent',
      amount,
      amount_capturable: 0,
      amount_received: 0,
      automatic_payment_methods: this.automaticPaymentMethods(params.automatic_payment_methods, methodTypes !== undefined),
      canceled_at: null,
      cancellation_reason: null,
      capture_method: 'automatic_async',
      client_secret: `${id}_secret_${stripeId('', 25)}`,
      confirmation_method: 'automatic',
      created: unixNow(),
      currency: params.currency.toLowerCase(),
      customer: null,
      description: optionalString(params.description, 'description'),
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      metadata: parseMetadata(params.metadata),
      next_action: null,
      payment_method: null,
      payment_method_types: methodTypes ?? ['card'],
      receipt_email: optionalString(params.receipt_email, 'receipt_email'),
      status: 'requires_payment_method',
    };
    this.intents.set(id, intent);
    return clone(intent);
  }

  /** Without explicit payment method types, current API versions turn automatic payment methods on. */
  private automaticPaymentMethods(value: unknown, explicitTypes: boolean): PaymentIntent['automatic_payment_methods'] {
    if (value === undefined) return explicitTypes ? null : { enabled: true };
    const settings = value as { enabled?: unknown; allow_redirects?: unknown };
    if (typeof value !== 'object' || value === null || (settings.enabled !== 'true' && settings.enabled !== 'false')) {
      throw invalidParam('Missing required param: automatic_payment_methods[enabled].', 'parameter_missing', 'automatic_payment_methods[enabled]');
    }
    const result: { enabled: boolean; allow_redirects?: string } = { enabled: settings.enabled === 'true' };
    if (typeof settings.allow_redirects === 'string') result.allow_redirects = settings.allow_redirects;
    return result;
  }

  retrievePaymentIntent(id: string): PaymentIntent {
    return clone(this.intent(id));
  }

  listPaymentIntents(): PaymentIntent[] {
    return [...this.intents.values()].map(clone);
  }

  cancelPaymentIntent(id: string, params: Record<string, unknown> = {}): PaymentIntent {
    rejectUnknownParams(params, ['cancellation_reason', 'expand']);
    const reason = optionalString(params.cancellation_reason, 'cancellation_reason');
    if (reason !== null && !CANCELLATION_REASONS.includes(reason)) {
      throw invalidParam(`Invalid cancellation_reason: must be one of ${CANCELLATION_REASONS.join(', ')}`, 'parameter_invalid_string', 'cancellation_reason');
    }
    const intent = this.intent(id);
    if (!CANCELABLE.includes(intent.status)) {
      throw unexpectedState(
        `You cannot cancel this PaymentIntent because it has a status of ${intent.status}. ` +
          `Only a PaymentIntent with one of the following statuses may be canceled: ${CANCELABLE.join(', ')}.`,
      );
    }
    intent.status = 'canceled';
    intent.canceled_at = unixNow();
    intent.cancellation_reason = reason;
    return clone(intent);
  }

  /** The customer paid: the intent succeeds with one charge for the whole amount. */
  succeed(id: string): PaymentIntent {
    const intent = this.intent(id);
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action', 'processing'].includes(intent.status)) {
      throw unexpectedState(`This PaymentIntent's status is ${intent.status}, so it cannot be confirmed.`);
    }
    const charge: Charge = {
      id: stripeId('ch'),
      object: 'charge',
      amount: intent.amount,
      amount_captured: intent.amount,
      amount_refunded: 0,
      captured: true,
      created: unixNow(),
      currency: intent.currency,
      description: intent.description,
      livemode: false,
      metadata: { ...intent.metadata },
      paid: true,
      payment_intent: intent.id,
      refunded: false,
      status: 'succeeded',
    };
    this.charges.set(charge.id, charge);
    Object.assign(intent, { status: 'succeeded', amount_received: intent.amount, latest_charge: charge.id, last_payment_error: null });
    return clone(intent);
  }

  /** A payment attempt was declined: the intent asks for another payment method, as on Stripe. */
  fail(id: string, reason?: string): PaymentIntent {
    const error = paymentError(reason);
    const intent = this.intent(id);
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action', 'processing'].includes(intent.status)) {
      throw unexpectedState(`This PaymentIntent's status is ${intent.status}, so a payment attempt cannot fail.`);
    }
    Object.assign(intent, { status: 'requires_payment_method', last_payment_error: error });
    return clone(intent);
  }

  /**
   * A refund of the succeeded charge, by `payment_intent` or `charge`: of `amount` (cents), or of all
   * that is left unrefunded without one. Several add up, as on Stripe; one for more than is left is
   * refused (`amount_too_large`), and the charge is `refunded` once nothing is left.
   */
  refund(params: Record<string, unknown>, pending = false): { refund: Refund; charge: Charge; paymentIntent: PaymentIntent } {
    rejectUnknownParams(params, REFUND_PARAMS);
    const charge = this.refundableCharge(params);
    const left = charge.amount - charge.amount_refunded;
    const amount = parseAmount(params.amount, 'amount', false) ?? left;
    if (amount > left) {
      throw new StripeApiError(400, {
        type: 'invalid_request_error',
        message: `Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`,
        code: 'amount_too_large',
        param: 'amount',
      });
    }
    const refund: Refund = {
      id: stripeId('re'),
      object: 'refund',
      amount,
      charge: charge.id,
      created: unixNow(),
      currency: charge.currency,
      metadata: parseMetadata(params.metadata),
      payment_intent: charge.payment_intent,
      reason: optionalString(params.reason, 'reason'),
      status: pending ? 'pending' : 'succeeded',
    };
    this.refunds.set(refund.id, refund);
    Object.assign(charge, { amount_refunded: charge.amount_refunded + amount, refunded: charge.amount_refunded + amount === charge.amount });
    return { refund: clone(refund), charge: clone(charge), paymentIntent: this.retrievePaymentIntent(charge.payment_intent) };
  }

  /**
   * A pending refund confirmed or failed by the bank, or a succeeded one failed after all (Stripe: "a
   * refund can fail after it has succeeded"); a failed one gives its amount back to the charge.
   */
  settleRefund(id: string, outcome: 'succeeded' | 'failed'): { refund: Refund; charge: Charge } {
    const refund = this.refunds.get(id);
    if (!refund) throw missing('refund', id, 'id');
    if (refund.status !== 'pending' && !(refund.status === 'succeeded' && outcome === 'failed')) {
      throw unexpectedState(`This refund's status is ${refund.status}, so it cannot be settled.`);
    }
    refund.status = outcome;
    const charge = this.charges.get(refund.charge) as Charge;
    if (outcome === 'failed') Object.assign(charge, { amount_refunded: charge.amount_refunded - refund.amount, refunded: false });
    return { refund: clone(refund), charge: clone(charge) };
  }

  listRefunds(): Refund[] {
    return [...this.refunds.values()].map(clone);
  }

  private refundableCharge(params: Record<string, unknown>): Charge {
    let charge: Charge | undefined;
    if (typeof params.charge === 'string' && params.charge !== '') {
      charge = this.charges.get(params.charge);
      if (!charge) throw missing('charge', params.charge, 'charge');
    } else if (typeof params.payment_intent === 'string' && params.payment_intent !== '') {
      const intent = this.intent(params.payment_intent, 'payment_intent');
      charge = intent.latest_charge === null ? undefined : this.charges.get(intent.latest_charge);
      if (!charge) {
        throw new StripeApiError(400, {
          type: 'invalid_request_error',
          message: `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
          code: 'charge_not_refundable',
        });
      }
    } else {
      throw invalidParam('One of the following params should be provided for this request: payment_intent or charge.', 'parameter_missing', 'payment_intent');
    }
    if (charge.refunded) {
      throw new StripeApiError(400, { type: 'invalid_request_error', message: `Charge ${charge.id} has already been refunded.`, code: 'charge_already_refunded' });
    }
    return charge;
  }

  private intent(id: string, param = 'intent'): PaymentIntent {
    const intent = this.intents.get(id);
    if (!intent) throw missing('payment_intent', id, param);
    return intent;
  }
}
