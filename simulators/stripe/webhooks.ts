/**
 * Events and their webhook delivery: each event is signed the way Stripe signs it
 * (`Stripe-Signature: t=<unix>,v1=<HMAC-SHA256 of "<t>.<payload>">`), POSTed to the configured URL
 * and retried with exponential back-off until a 2xx answer or the last attempt.
 */
import { createHmac } from 'node:crypto';
import type { Logger } from '../../platform/logger';
import { stripeId, unixNow } from './objects';

export type StripeEventType = 'payment_intent.succeeded' | 'payment_intent.payment_failed' | 'payment_intent.canceled' | 'charge.refunded' | 'refund.created' | 'refund.updated';

export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: { id: string; object: string } };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: StripeEventType;
}

export interface DeliveryAttempt {
  attempt: number;
  at: string;
  /** The receiver's HTTP status; null when the connection failed. */
  status: number | null;
  error: string | null;
  /** The start of the receiver's answer, as Stripe's dashboard shows it. */
  responseBody: string | null;
  durationMs: number;
}

/** `not_configured`: no webhook URL, the event is only recorded. `pending`: a retry is scheduled. */
export type DeliveryStatus = 'delivered' | 'pending' | 'failed' | 'not_configured';

export interface EventDelivery {
  id: string;
  type: StripeEventType;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  event: StripeEvent;
}

export interface RetryPolicy {
  attempts: number;
  initialDelayMs: number;
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, initialDelayMs: 200, timeoutMs: 10_000 };

/** The `Stripe-Signature` header value for `payload` signed at `timestamp` (unix seconds). */
export function signatureHeader(payload: string, secret: string, timestamp = unixNow()): string {
  const signature = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${signature}`;
}

interface DeliveryRecord {
  event: StripeEvent;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  /** Bumped by a resend, so a retry scheduled by an earlier sequence stands down. */
  sequence: number;
  retry?: NodeJS.Timeout;
}

export interface WebhookOptions {
  webhookUrl: () => string | undefined;
  webhookSecret: string;
  apiVersion: string;
  logger: Logger;
  retry: RetryPolicy;
}

export class WebhookDispatcher {
  private readonly records: DeliveryRecord[] = [];
  private readonly inFlight = new Set<AbortController>();
  private stopped = false;

  constructor(private readonly options: WebhookOptions) {}

  /**
   * Records an event about `object` and makes the first delivery attempt; resolves once that
   * attempt is over, so a caller can report whether the receiver took it. Retries run later.
   */
  async publish(type: StripeEventType, object: { id: string; object: string }, request: StripeEvent['request'] = { id: null, idempotency_key: null }): Promise<EventDelivery> {
    const event: StripeEvent = {
      id: stripeId('evt'),
      object: 'event',
      api_version: this.options.apiVersion,
      created: unixNow(),
      data: { object: structuredClone(object) },
      livemode: false,
      pending_webhooks: 1,
      request,
      type,
    };
    const record: DeliveryRecord = { event, status: 'pending', attempts: [], sequence: 0 };
    this.records.push(record);
    await this.startSequence(record);
    return view(record);
  }

  /** Delivers a recorded event again, under the same id, as Stripe's "Resend" does. */
  async resend(id: string): Promise<EventDelivery | undefined> {
    const record = this.records.find((r) => r.event.id === id);
    if (!record) return undefined;
    await this.startSequence(record);
    return view(record);
  }

  list(): EventDelivery[] {
    return this.records.map(view);
  }

  events(): StripeEvent[] {
    return this.records.map((r) => structuredClone(r.event));
  }

  /** Cancels scheduled retries and aborts deliveries in flight. */
  stop(): void {
    this.stopped = true;
    for (const record of this.records) clearTimeout(record.retry);
    for (const controller of this.inFlight) controller.abort();
  }

  private async startSequence(record: DeliveryRecord): Promise<void> {
    clearTimeout(record.retry);
    record.sequence += 1;
    await this.attempt(record, record.sequence, 1);
  }

  private async attempt(record: DeliveryRecord, sequence: number, attemptInSequence: number): Promise<void> {
    const url = this.options.webhookUrl();
    if (url === undefined) {
      record.status = 'not_configured';
      return;
    }
    record.status = 'pending';
    const attempt = await this.post(url, record.event, record.attempts.length + 1);
    record.attempts.push(attempt);
    if (this.stopped || sequence !== record.sequence) return;
    const log = { eventId: record.event.id, type: record.event.type, attempt: attempt.attempt, status: attempt.status };
    if (attempt.status !== null && attempt.status >= 200 && attempt.status < 300) {
      record.status = 'delivered';
      this.options.logger.info(log, 'webhook delivered');
      return;
    }
    const { attempts, initialDelayMs } = this.options.retry;
    if (attemptInSequence >= attempts) {
      record.status = 'failed';
      this.options.logger.warn({ ...log, error: attempt.error }, 'webhook delivery failed, giving up');
      return;
    }
    const delayMs = initialDelayMs * 2 ** (attemptInSequence - 1);
    this.options.logger.warn({ ...log, error: attempt.error, retryInMs: delayMs }, 'webhook delivery failed, will retry');
    record.retry = setTimeout(() => void this.attempt(record, sequence, attemptInSequence + 1), delayMs);
    record.retry.unref();
  }

  /** One POST, signed at the moment it is sent, as Stripe signs each attempt. */
  private async post(url: string, event: StripeEvent, attempt: number): Promise<DeliveryAttempt> {
    const payload = JSON.stringify(event, null, 2);
    const started = Date.now();
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), this.options.retry.timeoutMs);
    this.inFlight.add(controller);
    const result = { attempt, at: new Date(started).toISOString() };
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json; charset=utf-8',
          'Stripe-Signature': signatureHeader(payload, this.options.webhookSecret),
          'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        },
        body: payload,
        signal: controller.signal,
      });
      const text = await response.text();
      return { ...result, status: response.status, error: null, responseBody: text.slice(0, 500), durationMs: Date.now() - started };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      const message = controller.signal.aborted ? 'aborted (timeout or simulator stopping)' : (cause ?? (error instanceof Error ? error.message : String(error)));
      return { ...result, status: null, error: message, responseBody: null, durationMs: Date.now() - started };
    } finally {
      clearTimeout(timeout);
      this.inFlight.delete(controller);
    }
  }
}

function view(record: DeliveryRecord): EventDelivery {
  return {
    id: record.event.id,
    type: record.event.type,
    status: record.status,
    attempts: record.attempts.map((a) => ({ ...a })),
    event: structuredClone(record.event),
  };
}
