/**
 * Provider events at the webhook (CONTRACT §5): verified first, processed once per event id, and
 * applied by the transition table. The state change, the record of the event and the events we
 * publish commit in one transaction.
 *
 * Stripe does not promise the order of its events, so the payment follows the provider's facts
 * whatever order they arrive in:
 *
 * | Provider event                                   | From                              | To       | Publishes          |
 * |--------------------------------------------------|-----------------------------------|----------|--------------------|
 * | payment_intent.succeeded                         | PAYMENT_PENDING, FAILED           | SUCCESS  | payment-success    |
 * | payment_intent.payment_failed, .canceled         | PAYMENT_PENDING                   | FAILED   | payment-failed     |
 * | charge.refunded (full)                           | SUCCESS, PAYMENT_PENDING, FAILED  | REFUNDED | payment-refunded   |
 *
 * Our refunds (refund-ledger.ts) follow their own events: `refund.created` / `refund.updated` with
 * status `succeeded`, and the refunds a `charge.refunded` lists as succeeded, make the refund they
 * name (by our `refundId` in its metadata, or the provider's id) SUCCEEDED, once; `failed` or
 * `canceled` parks a pending one FAILED for an admin. A partial `charge.refunded` changes the
 * payment no further: it stays SUCCESS until its refunds that succeeded reach its amount.
 *
 * A full refund seen before its success therefore leaves the payment REFUNDED, and the success that
 * follows finds no row of the table: it changes nothing and publishes nothing, so no order is made
 * for money already given back. The payment-refunded of a payment never paid takes no revenue out
 * of analytics (a fact counts as paid only with a paid day and no refund day) and tells the order
 * service to make no order should a payment-success for it ever arrive.
 */
import type { EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import { forUpdate, isUniqueViolation } from '../../platform/database';
import type { Logger } from '../../platform/logger';
import { linkToTraceparent } from '../../platform/telemetry/spans';
import { Payment, PaymentItem, ProviderEvent, Refund, type PaymentStatus } from './entities';
import { publishPaymentFailed, publishPaymentRefunded, publishPaymentSuccess, publishRefundFailed } from './events';
import type { PaymentProvider, Stripe } from './provider';
import { settlePendingRefunds, settleRefund } from './refund-ledger';

type Outcome = 'APPLIED' | 'IGNORED' | 'UNKNOWN_INTENT';

interface Transition {
  from: readonly PaymentStatus[];
  to: PaymentStatus;
  publish(manager: EntityManager, payment: Payment, event: Stripe.Event, at: Date): Promise<void>;
}

const firstText = (...values: unknown[]): string | undefined => values.find((value): value is string => typeof value === 'string' && value !== '');

function failureReason(event: Stripe.Event): string {
  if (event.type === 'payment_intent.canceled') return firstText(event.data.object.cancellation_reason) ?? 'canceled';
  const error = (event.data.object as Stripe.PaymentIntent).last_payment_error;
  return firstText(error?.code, error?.decline_code, error?.message) ?? 'payment_failed';
}

const TRANSITIONS: Record<string, Transition> = {
  'payment_intent.succeeded': {
    from: ['PAYMENT_PENDING', 'FAILED'],
    to: 'SUCCESS',
    publish: async (manager, payment, _event, at) => {
      const items = await manager.find(PaymentItem, { where: { paymentId: payment.id } });
      await publishPaymentSuccess(manager, payment, items, at);
    },
  },
  'payment_intent.payment_failed': {
    from: ['PAYMENT_PENDING'],
    to: 'FAILED',
    publish: (manager, payment, event, at) => publishPaymentFailed(manager, payment, failureReason(event), at),
  },
  'payment_intent.canceled': {
    from: ['PAYMENT_PENDING'],
    to: 'FAILED',
    publish: (manager, payment, event, at) => publishPaymentFailed(manager, payment, failureReason(event), at),
  },
  'charge.refunded': {
    // From PAYMENT_PENDING or FAILED too: the refund may arrive before the success it gives back.
    from: ['SUCCESS', 'PAYMENT_PENDING', 'FAILED'],
    to: 'REFUNDED',
    publish: (manager, payment, _event, at) => publishPaymentRefunded(manager, payment, at),
  },
};

/** The PaymentIntent an event is about, if it is about one. */
function intentId(event: Stripe.Event): string | undefined {
  const object = event.data.object as { object?: unknown; id?: unknown; payment_intent?: unknown };
  if (object.object === 'payment_intent') return firstText(object.id);
  if (object.object === 'charge' || object.object === 'refund') return firstText(object.payment_intent, (object.payment_intent as { id?: unknown } | null | undefined)?.id);
  return undefined;
}

/** 9999-12-31T23:59:59Z, the last moment a DATETIME column holds. */
const LAST_STORABLE_SECOND = 253_402_300_799;

/**
 * What the handler reads of an event. Stripe always sends these; a good signature proves who sent
 * the bytes, not their shape, so anything else is acknowledged and ignored rather than crashing.
 */
function isProviderEvent(value: unknown): value is Stripe.Event {
  const event = value as { id?: unknown; type?: unknown; created?: unknown; data?: { object?: unknown } | null } | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.id === 'string' &&
    event.id.length > 0 &&
    event.id.length <= 255 &&
    typeof event.type === 'string' &&
    Number.isSafeInteger(event.created) &&
    (event.created as number) >= 0 &&
    (event.created as number) <= LAST_STORABLE_SECOND &&
    typeof event.data === 'object' &&
    event.data !== null &&
    typeof event.data.object === 'object' &&
    event.data.object !== null
  );
}

/** A refund counts only when it is full. */
function isFullRefund(event: Stripe.Event): boolean {
  const charge = event.data.object as Stripe.Charge;
  return charge.refunded || charge.amount_refunded >= charge.amount;
}

/** The provider's refunds an event reports, as `refund.*` carries one and `charge.refunded` may list them. */
function refundObjects(event: Stripe.Event): Stripe.Refund[] {
  if (event.type === 'refund.created' || event.type === 'refund.updated') return [event.data.object];
  if (event.type === 'charge.refunded') return event.data.object.refunds?.data ?? [];
  return [];
}

/** Settles or parks the refunds of ours that `event` reports (see the table's note); true when one changed. */
async function applyRefundObjects(db: Database, manager: EntityManager, payment: Payment, event: Stripe.Event, at: Date): Promise<boolean> {
  let changed = false;
  for (const object of refundObjects(event)) {
    const ours = object.metadata?.refundId
      ? await manager.findOne(Refund, { where: { id: object.metadata.refundId, paymentId: payment.id } })
      : await manager.findOne(Refund, { where: { providerRefundId: object.id, paymentId: payment.id } });
    if (!ours) continue;
    if (object.status === 'succeeded') changed = (await settleRefund(db, manager, ours.id, at, object.id)) || changed;
    else if ((object.status === 'failed' || object.status === 'canceled') && ours.status === 'PENDING') {
      const failed = {
        status: 'FAILED' as const,
        refusals: ours.refusals + 1,
        failureCode: 'refund_failed',
        failureReason: 'The payment provider reported the refund failed',
        updatedAt: new Date(),
      };
      if ((await manager.update(Refund, { id: ours.id, status: 'PENDING' }, failed)).affected !== 1) continue;
      // A cancel's refund shows on its order, as a refusal does (refunds.ts).
      if (ours.origin !== null) await publishRefundFailed(manager, payment, ours.orderId ?? '', failed.failureCode);
      changed = true;
    }
  }
  return changed;
}

export class WebhookHandler {
  constructor(
    private readonly db: Database,
    private readonly provider: PaymentProvider,
    private readonly logger: Logger,
  ) {}

  async receive(rawBody: Buffer, signature: string | undefined): Promise<void> {
    const event: unknown = this.provider.verifyWebhook(rawBody, signature);
    if (!isProviderEvent(event)) {
      this.logger.warn('signed webhook body that is not a provider event; ignored');
      return;
    }
    let outcome: Outcome | 'DUPLICATE';
    try {
      outcome = await this.db.transaction((manager) => this.apply(manager, event));
    } catch (error) {
      // The same event delivered twice at once: the loser's insert of its id fails.
      if (!isUniqueViolation(error) || !(await this.db.manager.findOne(ProviderEvent, { where: { id: event.id } }))) throw error;
      outcome = 'DUPLICATE';
    }
    this.logger.info({ providerEventId: event.id, type: event.type, outcome }, 'provider event received');
  }

  private async apply(manager: EntityManager, event: Stripe.Event): Promise<Outcome | 'DUPLICATE'> {
    if (await manager.findOne(ProviderEvent, { where: { id: event.id } })) return 'DUPLICATE';
    const at = new Date(event.created * 1000);
    const intent = intentId(event);
    // Locked, so two events about one payment apply one after the other (SQLite transactions already queue).
    const payment = intent ? await manager.findOne(Payment, { where: { paymentIntentId: intent }, ...forUpdate(this.db) }) : null;
    // The provider's call starts a trace of its own; it links to the checkout's.
    linkToTraceparent(payment?.traceParent);
    const transition = TRANSITIONS[event.type];
    let outcome: Outcome = 'IGNORED';
    if (intent && !payment && transition) {
      outcome = 'UNKNOWN_INTENT';
      this.logger.warn({ providerEventId: event.id, paymentIntentId: intent }, 'provider event for an unknown PaymentIntent');
    } else if (payment && transition && transition.from.includes(payment.status) && (event.type !== 'charge.refunded' || isFullRefund(event))) {
      const changes: Partial<Payment> = { status: transition.to, updatedAt: new Date() };
      if (transition.to === 'SUCCESS') Object.assign(changes, { paidAt: at, failureReason: null });
      if (transition.to === 'FAILED') changes.failureReason = failureReason(event).slice(0, 255);
      const result = await manager.update(Payment, { id: payment.id, status: payment.status }, changes);
      if (result.affected === 1) {
        Object.assign(payment, changes);
        await transition.publish(manager, payment, event, at);
        if (transition.to === 'REFUNDED') await settlePendingRefunds(this.db, manager, payment.id, at);
        outcome = 'APPLIED';
      }
    }
    if (payment && (await applyRefundObjects(this.db, manager, payment, event, at))) outcome = 'APPLIED';
    await manager.insert(ProviderEvent, { id: event.id, type: event.type.slice(0, 100), paymentId: payment?.id ?? null, outcome, receivedAt: new Date() });
    return outcome;
  }
}
