/**
 * What a payment's refunds add up to, and the two writes that change it (CONTRACT §11), each in the
 * caller's transaction with the payment row locked, so that refunds racing for one payment apply
 * one after the other:
 *
 * - `reserveRefund` adds a PENDING refund only if it fits in what is left: the payment's amount less
 *   its refunds that are PENDING or SUCCEEDED. An ADMIN's FAILED refund holds no money until it is
 *   retried (the admin may refund otherwise instead); a cancel's FAILED refund keeps holding all it
 *   was for, as that is owed to the customer of a cancelled order until an admin's retry goes
 *   through, so no other refund can take it and the retry always fits.
 *   Two refunds racing for the last amount: the second reads the first and is refused (409).
 * - `settleRefund` is the one place a refund becomes SUCCEEDED, whoever learnt it first (the
 *   provider's answer, `refund.created`/`refund.updated`, `charge.refunded`): once, with
 *   `payment-refund-succeeded`, and when the refunds that succeeded reach the payment's amount the
 *   payment becomes REFUNDED with `payment-refunded`, in the same transaction.
 */
import { Not, type EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import { forUpdate } from '../../platform/database';
import { conflict, notFound } from '../../platform/errors';
import { centsText } from '../../platform/money';
import { Payment, PaymentItem, Refund, type RefundItem } from './entities';
import { publishPaymentRefunded, publishRefundSucceeded } from './events';

/** Refunds that hold part of the payment's money: asked for, or done, and a cancel's in any case. */
const holdsMoney = (refund: Refund) => refund.status !== 'FAILED' || refund.origin !== null;

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
 * comment. `providerRefundId` is recorded when the caller learnt it.
 */
export async function settleRefund(db: Database, manager: EntityManager, refundId: string, at: Date, providerRefundId?: string): Promise<boolean> {
  const refund = await manager.findOne(Refund, { where: { id: refundId } });
  if (!refund || refund.status === 'SUCCEEDED') return false;
  const payment = await manager.findOneOrFail(Payment, { where: { id: refund.paymentId }, ...forUpdate(db) });
  const changes = { status: 'SUCCEEDED' as const, failureCode: null, failureReason: null, updatedAt: new Date(), ...(providerRefundId ? { providerRefundId } : {}) };
  const result = await manager.update(Refund, { id: refund.id, status: Not('SUCCEEDED') }, changes);
  if (result.affected !== 1) return false;
  Object.assign(refund, changes);
  const [items, refunds] = await Promise.all([
    manager.find(PaymentItem, { where: { paymentId: payment.id } }),
    manager.find(Refund, { where: { paymentId: payment.id, status: 'SUCCEEDED' } }),
  ]);
  const refundedCents = refunds.reduce((sum, one) => sum + one.amountCents, 0);
  const full = refundedCents >= payment.amountCents;
  await publishRefundSucceeded(manager, payment, refund, valued(refund.items, items), { refundedCents, full, restock: refund.restock && refund.origin === null }, at);
  if (full && payment.status === 'SUCCESS') {
    const made = await manager.update(Payment, { id: payment.id, status: 'SUCCESS' }, { status: 'REFUNDED', updatedAt: new Date() });
    if (made.affected === 1) await publishPaymentRefunded(manager, Object.assign(payment, { status: 'REFUNDED' }), at);
  }
  return true;
}

/**
 * The provider reported the payment refunded in full (`charge.refunded`): refunds it had accepted as
 * pending are done.
 */
export async function settlePendingRefunds(db: Database, manager: EntityManager, paymentId: string, at: Date): Promise<void> {
  const pending = await manager.find(Refund, { where: { paymentId, status: 'PENDING' } });
  for (const refund of pending.filter((one) => one.providerRefundId)) await settleRefund(db, manager, refund.id, at);
}

/** A refund's lines with the title and unit price paid, as events carry them. */
function valued(refunded: RefundItem[], items: PaymentItem[]): { bookId: string; bookTitle: string; quantity: number; unitPriceCents: number }[] {
  return refunded.map(({ bookId, quantity }) => {
    const line = items.find((item) => item.bookId.toLowerCase() === bookId);
    return { bookId, bookTitle: line?.bookTitle ?? '', quantity, unitPriceCents: line?.unitPriceCents ?? 0 };
  });
}
