/**
 * What a payment's refunds add up to, and the two writes that change it (CONTRACT §11), each in the
 * caller's transaction with the payment row locked, so that refunds racing for one payment apply
 * one after the other:
 *
 * - `reserveRefund` adds a PENDING refund only if it fits in what is left: the payment's amount less
 *   its refunds that are PENDING or SUCCEEDED. An ADMIN's FAILED refund holds no money until it is
 *   retried (the admin may refund otherwise instead), unless its answer was lost, as it may then be
 *   at the provider until asked again under its own key; a cancel's FAILED refund keeps holding all it
 *   was for, as that is owed to the customer of a cancelled order until an admin's retry goes
 *   through, so no other refund can take it and the retry always fits.
 *   Two refunds racing for the last amount: the second reads the first and is refused (409).
 * - `settleRefund` is the one place a refund becomes SUCCEEDED, whoever learnt it first (the
 *   provider's answer, its `refund.created`/`refund.updated`, its own entry in a charge's
 *   refunds): once, with `payment-refund-succeeded`, and when the refunds that succeeded reach the
 *   payment's amount the payment becomes REFUNDED with `payment-refunded`, in the same transaction.
 * - `failRefund` is the one place the provider's failure of a refund lands, a pending one or one
 *   that had succeeded (then reversed).
 *
 * A refund's state comes only from what the provider says of that refund, never from its charge
 * being refunded in full: Stripe counts pending refunds in the charge's `amount_refunded`.
 */
import { Not, type EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import { forUpdate } from '../../platform/database';
import { conflict, notFound } from '../../platform/errors';
import { centsText } from '../../platform/money';
import { Payment, PaymentItem, Refund, type RefundItem } from './entities';
import { publishPaymentRefunded, publishRefundFailed, publishRefundReversed, publishRefundSucceeded } from './events';

/**
 * A refund whose answer was lost (`provider_unavailable`) may have been made at the provider: it
 * holds its amount until asked again under its own key (refunds.ts `settleInFlight`, or a retry).
 */
export const mayBeAtProvider = (refund: Refund) => refund.status === 'PENDING' || refund.failureCode === 'provider_unavailable';

/** Refunds that hold part of the payment's money: asked for, or done, or maybe done, and a cancel's in any case. */
const holdsMoney = (refund: Refund) => refund.status !== 'FAILED' || refund.origin !== null || mayBeAtProvider(refund);

export function centsLeft(payment: Payment, refunds: Refund[], except?: string): number {
  return payment.amountCents - refunds.filter((refund) => holdsMoney(refund) && refund.id !== except).reduce((sum, refund) => sum + refund.amountCents, 0);
}

export const exceedsLeft = (leftCents: number) => conflict(`Refund exceeds the amount left: ${centsText(leftCents)}`, 'REFUND_EXCEEDS_AMOUNT_LEFT');

/**
 * The copies of each book the payment's refunds have not yet taken: a line refunded by copies can
 * be refunded again only for the copies left. A refund of an amount takes no copies.
 */
export function copiesLeft(items: PaymentItem[], refunds: Refund[]): Map<string, number> {
  const left = new Map<string, number>();
  for (const item of items) left.set(item.bookId.toLowerCase(), (left.get(item.bookId.toLowerCase()) ?? 0) + item.quantity);
  for (const refund of refunds.filter(holdsMoney)) {
    for (const item of refund.items) left.set(item.bookId, (left.get(item.bookId) ?? 0) - item.quantity);
  }
  return left;
}

export interface LockedPayment {
  payment: Payment;
  items: PaymentItem[];
  refunds: Refund[];
}

/** The payment, locked (404 when unknown), with its lines and refunds. */
export async function lockPayment(db: Database, manager: EntityManager, paymentId: string): Promise<LockedPayment> {
  const payment = await manager.findOne(Payment, { where: { id: paymentId }, ...forUpdate(db) });
  if (!payment || !payment.paymentIntentId) throw notFound(`Payment not found: ${paymentId}`, 'PAYMENT_NOT_FOUND');
  const [items, refunds] = await Promise.all([manager.find(PaymentItem, { where: { paymentId } }), manager.find(Refund, { where: { paymentId } })]);
  return { payment, items, refunds };
}

/** Inserts `refund` (PENDING) if its amount fits in what is left of the payment (else 409). */
export async function reserveRefund(manager: EntityManager, locked: LockedPayment, refund: Refund): Promise<Refund> {
  const left = centsLeft(locked.payment, locked.refunds, refund.id);
  if (refund.amountCents > left) throw exceedsLeft(left);
  await manager.insert(Refund, refund);
  return refund;
}

/**
 * Makes refund `refundId` SUCCEEDED, unless it already is (then nothing happens); see the file's
 * comment. `providerRefundId` is recorded when the caller learnt it. `attempt` is the refusals the
 * provider's refund was asked under (its `metadata.attempt`): an earlier attempt's word is stale.
 */
export async function settleRefund(db: Database, manager: EntityManager, refundId: string, at: Date, providerRefundId?: string, attempt?: number): Promise<boolean> {
  const refund = await manager.findOne(Refund, { where: { id: refundId } });
  if (!refund || refund.status === 'SUCCEEDED' || (attempt !== undefined && attempt !== refund.refusals)) return false;
  const payment = await manager.findOneOrFail(Payment, { where: { id: refund.paymentId }, ...forUpdate(db) });
  const changes = { status: 'SUCCEEDED' as const, failureCode: null, failureReason: null, updatedAt: new Date(), ...(providerRefundId ? { providerRefundId } : {}) };
  const result = await manager.update(Refund, { id: refund.id, refusals: refund.refusals, status: Not('SUCCEEDED') }, changes);
  if (result.affected !== 1) return false;
  Object.assign(refund, changes);
  const [items, refundedCents] = await Promise.all([manager.find(PaymentItem, { where: { paymentId: payment.id } }), succeededCents(manager, payment.id)]);
  const full = refundedCents >= payment.amountCents;
  const totals = { refundedCents, full, restock: refund.restock && refund.origin === null, attempt: refund.refusals };
  await publishRefundSucceeded(manager, payment, refund, valued(refund.items, items), totals, at);
  if (full && payment.status === 'SUCCESS') {
    const made = await manager.update(Payment, { id: payment.id, status: 'SUCCESS' }, { status: 'REFUNDED', updatedAt: new Date() });
    if (made.affected === 1) await publishPaymentRefunded(manager, Object.assign(payment, { status: 'REFUNDED' }), at);
  }
  return true;
}

/** Why a refund the provider failed is FAILED, as an admin reads it. */
const PROVIDER_FAILED = { code: 'refund_failed', reason: 'The payment provider reported the refund failed' } as const;
const PROVIDER_REVERSED = { code: 'refund_reversed', reason: 'The payment provider reported the refund failed after it had succeeded; retry the refund' } as const;

/**
 * The provider reported refund `refundId` failed (CONTRACT §11). A PENDING one is parked FAILED
 * for an admin. A SUCCEEDED one is reversed: FAILED again, the payment back to SUCCESS if its
 * refunds that succeeded no longer reach its amount, and `payment-refund-failed` carrying the
 * reversed amount, so that analytics and the order take back what its success gave. Either way a
 * retry asks the provider under a new key, as the failed refund is final there. False when nothing
 * changed (unknown, already FAILED).
 */
export async function failRefund(db: Database, manager: EntityManager, refundId: string, attempt: number, at: Date): Promise<boolean> {
  const refund = await manager.findOne(Refund, { where: { id: refundId } });
  if (!refund || (!mayBeAtProvider(refund) && refund.status !== 'SUCCEEDED') || attempt !== refund.refusals) return false;
  const payment = await manager.findOneOrFail(Payment, { where: { id: refund.paymentId }, ...forUpdate(db) });
  const reversed = refund.status === 'SUCCEEDED';
  const why = reversed ? PROVIDER_REVERSED : PROVIDER_FAILED;
  const changes = { status: 'FAILED' as const, refusals: refund.refusals + 1, failureCode: why.code, failureReason: why.reason, updatedAt: new Date() };
  const result = await manager.update(Refund, { id: refund.id, status: refund.status, refusals: refund.refusals }, changes);
  if (result.affected !== 1) return false;
  if (!reversed) {
    // A cancel's refund shows on its order, as a refusal does (refunds.ts).
    if (refund.origin !== null) await publishRefundFailed(manager, payment, refund.orderId ?? '', why.code);
    return true;
  }
  const refundedCents = await succeededCents(manager, payment.id);
  const wasFull = payment.status === 'REFUNDED' && refundedCents < payment.amountCents;
  if (wasFull) await manager.update(Payment, { id: payment.id, status: 'REFUNDED' }, { status: 'SUCCESS', updatedAt: new Date() });
  await publishRefundReversed(manager, payment, refund, { refundedCents, wasFull, attempt: refund.refusals }, at);
  return true;
}

async function succeededCents(manager: EntityManager, paymentId: string): Promise<number> {
  const refunds = await manager.find(Refund, { where: { paymentId, status: 'SUCCEEDED' } });
  return refunds.reduce((sum, one) => sum + one.amountCents, 0);
}

/**
 * Whether a charge the provider reports refunded in full may make the payment REFUNDED: only when
 * no refund of ours is still open there, as the provider's `amount_refunded` counts pending refunds
 * too. An open refund settles the payment by its own status (`settleRefund`); the charge's word
 * stands alone only for money no refund of ours asked for (the provider's dashboard).
 */
export const chargeRefundsPayment = (refunds: Refund[]) => !refunds.some(mayBeAtProvider);

/** A refund's lines with the title and unit price paid, as events carry them. */
function valued(refunded: RefundItem[], items: PaymentItem[]): { bookId: string; bookTitle: string; quantity: number; unitPriceCents: number }[] {
  return refunded.map(({ bookId, quantity }) => {
    const line = items.find((item) => item.bookId.toLowerCase() === bookId);
    return { bookId, bookTitle: line?.bookTitle ?? '', quantity, unitPriceCents: line?.unitPriceCents ?? 0 };
  });
}
