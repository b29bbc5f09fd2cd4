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
 * | payment_intent.payment_failed                    | FAILED with checkout_expired      | FAILED   | payment-failed     |
 * | charge.refunded (full), no refund of ours open   | SUCCESS, PAYMENT_PENDING, FAILED  | REFUNDED | payment-refunded   |
 *
 * Our refunds (refund-ledger.ts) follow their own status only: `refund.created` / `refund.updated`,
 * and the refunds a `charge.refunded` lists, with status `succeeded` make the refund they name (by
 * our `refundId` and attempt in its metadata, or the provider's id) SUCCEEDED, once; `failed` or
 * `canceled` parks a pending one FAILED for an admin, and reverses one that had succeeded. Stripe's
 * `amount_refunded` counts pending refunds, so a charge refunded in full settles nothing of ours,
 * and moves the payment only while no refund of ours is open there (the money came back by the
 * provider's dashboard); otherwise the payment stays SUCCESS until its refunds that succeeded
 * reach its amount.
 *
 * A decline that arrives after the expiry sweep ended the same intent's checkout (holds.ts) says
 * why the payment failed: the customer was declined before the intent was cancelled, so the
 * payment's `failureReason` becomes the decline's and `payment-failed` is published again with it;
 * the first one, `checkout_expired`, was no failure to analytics, this one is.
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
import { CHECKOUT_EXPIRED } from '../../platform/events/topics';
import { isUuid } from '../../platform/validation';
import { linkToTraceparent } from '../../platform/telemetry/spans';
import { Payment, PaymentItem, ProviderEvent, Refund, type PaymentStatus } from './entities';
import { publishPaymentFailed, publishPaymentRefunded, publishPaymentSuccess } from './events';
import type { PaymentProvider, Stripe } from './provider';
import { chargeRefundsPayment, failRefund, settleRefund } from './refund-ledger';

type Outcome = 'APPLIED' | 'IGNORED' | 'UNKNOWN_INTENT';

interface Transition {
  from: readonly PaymentStatus[];
  /** A further condition on the payment, beside its status. */
  when?: (payment: Payment) => boolean;
  to: PaymentStatus;
  publish(manager: EntityManager, payment: Payment, event: Stripe.Event, at: Date): Promise<void>;
}

const firstText = (...values: unknown[]): string | undefined => values.find((value): value is string => typeof value === 'string' && value !== '');

function failureReason(event: Stripe.Event, payment: Payment): string {
  // Our expiry sweep cancels an intent whose hold ran out (holds.ts); whichever of it and this event comes first says why.
  if (event.type === 'payment_intent.canceled' && payment.holdExpiresAt && payment.holdExpiresAt.getTime() <= Date.now()) return CHECKOUT_EXPIRED;
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
    // Also a decline the expiry sweep overtook: the customer was declined on this intent before the
    // sweep cancelled it, so the payment failed for that reason, not for a cart left unpaid.
    from: ['PAYMENT_PENDING', 'FAILED'],
    when: (payment) => payment.status === 'PAYMENT_PENDING' || payment.failureReason === CHECKOUT_EXPIRED,
    to: 'FAILED',
    publish: (manager, payment, event, at) => publishPaymentFailed(manager, payment, failureReason(event, payment), at),
  },
  'payment_intent.canceled': {
    from: ['PAYMENT_PENDING'],
    to: 'FAILED',
    publish: (manager, payment, event, at) => publishPaymentFailed(manager, payment, failureReason(event, payment), at),
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

/**
 * A charge refunded in full makes the payment REFUNDED only while no refund of ours is open at the
 * provider (refund-ledger.ts `chargeRefundsPayment`): its total counts pending refunds.
 */
async function chargeRefundSettles(manager: EntityManager, payment: Payment, event: Stripe.Event): Promise<boolean> {
  const charge = event.data.object as Stripe.Charge;
  if (!charge.refunded && charge.amount_refunded < charge.amount) return false;
  return chargeRefundsPayment(await manager.find(Refund, { where: { paymentId: payment.id } }));
}

/** The provider's refunds an event reports, as `refund.*` carries one and `charge.refunded` may list them. */
function refundObjects(event: Stripe.Event): Stripe.Refund[] {
  if (event.type === 'refund.created' || event.type === 'refund.updated') return [event.data.object];
  if (event.type === 'charge.refunded') return event.data.object.refunds?.data ?? [];
  return [];
}

/** The attempt a provider's refund was asked under (refunds.ts puts it in the metadata; none: the first). */
const attemptOf = (object: Stripe.Refund) => Number(object.metadata?.attempt ?? 0);

/**
 * Settles or fails each refund of ours that `event` reports, by that refund's own status (see the
 * table's note); true when one changed. A report about an earlier attempt of a refund since asked
 * again is stale and changes nothing.
 */
async function applyRefundObjects(db: Database, manager: EntityManager, payment: Payment, event: Stripe.Event, at: Date): Promise<boolean> {
  let changed = false;
  for (const object of refundObjects(event)) {
    const ours = object.metadata?.refundId
      ? await manager.findOne(Refund, { where: { id: object.metadata.refundId, paymentId: payment.id } })
      : await manager.findOne(Refund, { where: { providerRefundId: object.id, paymentId: payment.id } });
    if (!ours) continue;
    const attempt = object.metadata?.refundId ? attemptOf(object) : ours.refusals;
    if (object.status === 'succeeded') changed = (await settleRefund(db, manager, ours.id, at, object.id, attempt)) || changed;
    else if (object.status === 'failed' || object.status === 'canceled') changed = (await failRefund(db, manager, ours.id, attempt, at)) || changed;
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

  /** The payment of an intent: by the intent it holds, else by the paymentId its intents carry in their metadata (an earlier intent of a checkout held anew). */
  private async paymentOf(manager: EntityManager, intent: string, event: Stripe.Event): Promise<Payment | null> {
    const current = await manager.findOne(Payment, { where: { paymentIntentId: intent }, ...forUpdate(this.db) });
    if (current) return current;
    const object = event.data.object as { object?: unknown; metadata?: Record<string, unknown> | null };
    const paymentId = object.object === 'payment_intent' ? firstText(object.metadata?.paymentId) : undefined;
    return paymentId && isUuid(paymentId) ? manager.findOne(Payment, { where: { id: paymentId }, ...forUpdate(this.db) }) : null;
  }

  private async apply(manager: EntityManager, event: Stripe.Event): Promise<Outcome | 'DUPLICATE'> {
    if (await manager.findOne(ProviderEvent, { where: { id: event.id } })) return 'DUPLICATE';
    const at = new Date(event.created * 1000);
    const intent = intentId(event);
    // Locked, so two events about one payment apply one after the other (SQLite transactions already queue).
    const payment = intent ? await this.paymentOf(manager, intent, event) : null;
    // The provider's call starts a trace of its own; it links to the checkout's.
    linkToTraceparent(payment?.traceParent);
    // An intent the payment left behind when its checkout was held anew (holds.ts): cancelled before it
    // was, so only its success could still matter, and that is applied.
    const stale = payment !== null && payment.paymentIntentId !== intent && event.type !== 'payment_intent.succeeded';
    const transition = stale ? undefined : TRANSITIONS[event.type];
    let outcome: Outcome = 'IGNORED';
    if (intent && !payment && transition) {
      outcome = 'UNKNOWN_INTENT';
      this.logger.warn({ providerEventId: event.id, paymentIntentId: intent }, 'provider event for an unknown PaymentIntent');
    } else if (
      payment &&
      transition &&
      transition.from.includes(payment.status) &&
      (transition.when?.(payment) ?? true) &&
      (event.type !== 'charge.refunded' || (await chargeRefundSettles(manager, payment, event)))
    ) {
      const changes: Partial<Payment> = { status: transition.to, updatedAt: new Date() };
      if (transition.to === 'SUCCESS') Object.assign(changes, { paidAt: at, failureReason: null });
      if (transition.to === 'FAILED') changes.failureReason = failureReason(event, payment).slice(0, 255);
      const result = await manager.update(Payment, { id: payment.id, status: payment.status }, changes);
      if (result.affected === 1) {
        Object.assign(payment, changes);
        await transition.publish(manager, payment, event, at);
        outcome = 'APPLIED';
      }
    }
    if (payment && (await applyRefundObjects(this.db, manager, payment, event, at))) outcome = 'APPLIED';
    await manager.insert(ProviderEvent, { id: event.id, type: event.type.slice(0, 100), paymentId: payment?.id ?? null, outcome, receivedAt: new Date() });
    return outcome;
  }
}
