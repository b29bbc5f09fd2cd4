/**
 * Stripe's objects as the simulator answers them (the fields the payment service and the SDK read,
 * with Stripe's names and null defaults), Stripe's error body, and Stripe-looking ids.
 */
import { randomBytes } from 'node:crypto';

export type PaymentIntentStatus = 'requires_payment_method' | 'requires_confirmation' | 'requires_action' | 'processing' | 'requires_capture' | 'succeeded' | 'canceled';

export interface PaymentError {
  type: 'card_error';
  code: string;
  decline_code: string | null;
  message: string;
}

export interface PaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_capturable: number;
  amount_received: number;
  automatic_payment_methods: { enabled: boolean; allow_redirects?: string } | null;
  canceled_at: number | null;
  cancellation_reason: string | null;
  capture_method: 'automatic_async';
  client_secret: string;
  confirmation_method: 'automatic';
  created: number;
  currency: string;
  customer: null;
  description: string | null;
  last_payment_error: PaymentError | null;
  latest_charge: string | null;
  livemode: false;
  metadata: Record<string, string>;
  next_action: null;
  payment_method: null;
  payment_method_types: string[];
  receipt_email: string | null;
  status: PaymentIntentStatus;
}

export interface Charge {
  id: string;
  object: 'charge';
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  captured: boolean;
  created: number;
  currency: string;
  description: string | null;
  livemode: false;
  metadata: Record<string, string>;
  paid: boolean;
  payment_intent: string;
  refunded: boolean;
  status: 'succeeded';
}

export interface Refund {
  id: string;
  object: 'refund';
  amount: number;
  charge: string;
  created: number;
  currency: string;
  metadata: Record<string, string>;
  payment_intent: string;
  reason: string | null;
  /** `pending` until the bank confirms it (card refunds may take days); then `succeeded` or `failed`. */
  status: 'succeeded' | 'pending' | 'failed';
}

export interface StripeErrorBody {
  type: 'invalid_request_error' | 'idempotency_error' | 'api_error' | 'card_error' | 'rate_limit_error';
  message: string;
  code?: string;
  param?: string;
}

/** An answer in Stripe's error shape. `beforeExecution` marks failures Stripe does not save for an idempotency key. */
export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: StripeErrorBody,
    readonly beforeExecution = false,
  ) {
    super(body.message);
    this.name = 'StripeApiError';
  }
}

export const invalidParam = (message: string, code: string, param: string) => new StripeApiError(400, { type: 'invalid_request_error', message, code, param }, true);

export const unexpectedState = (message: string) => new StripeApiError(400, { type: 'invalid_request_error', message, code: 'payment_intent_unexpected_state' });

const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `<prefix>_` and random alphanumerics, as Stripe's ids look; rejection sampling keeps it unbiased. */
export function stripeId(prefix: string, length = 24): string {
  let id = '';
  while (id.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && id.length < length) id += ALPHANUMERIC[byte % 62];
    }
  }
  return prefix ? `${prefix}_${id}` : id;
}

export const unixNow = () => Math.floor(Date.now() / 1000);

export function missing(kind: string, id: string, param: string): StripeApiError {
  return new StripeApiError(404, { type: 'invalid_request_error', message: `No such ${kind}: '${id}'`, code: 'resource_missing', param });
}
