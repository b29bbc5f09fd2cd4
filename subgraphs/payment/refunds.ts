/**
 * Refunds (CONTRACT §6, §11). An ADMIN refunds part of a SUCCESS payment, by an amount or by copies
 * of its lines, with a reason; `order-cancelled` refunds what is left of the payment. Each refund is
 * a row that tells where it stands; what may be refunded and when a refund succeeds is
 * refund-ledger.ts's. Each refund goes to the provider under its own idempotency key (the cancel's
 * is keyed by the orderId, so an event delivered again refunds once), and a refusal needs a new one.
 *
 * For a cancel, a passing failure rejects and the consumer redelivers the event until the provider
 * takes it. For an ADMIN's refund it parks the refund FAILED under the same key, so the admin's
 * retry asks again without refunding twice, and answers 502. A refusal for good parks the refund
 * FAILED with its reason (a cancel's also publishes `payment-refund-failed`, so the order shows
 * it); an admin retries it with a new key. A refund the provider takes as pending succeeds when its
 * `refund.updated` webhook says so, or its entry in a `charge.refunded`'s refunds (webhook.ts);
 * never because the charge is refunded in full, which counts pending refunds. The attempt (the
 * refusals so far) rides in the refund's metadata, so a word about an earlier attempt is stale.
 */
import { randomUUID } from 'node:crypto';
import { In, IsNull, type EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import type { OrderCancelledEvent } from '../../platform/events/topics';
import type { Logger } from '../../platform/logger';
import { assertRole, isSelfOrAdmin, type Principal } from '../../platform/auth';
import { badRequest, conflict, contractTimestamp, notFound, validationFailed } from '../../platform/errors';
import { fromCents, toCents } from '../../platform/money';
import type { CreateRefundRequest, RefundReason } from './dto';
import { Payment, Refund, type RefundItem, type RefundStatus } from './entities';
import { publishRefundFailed } from './events';
import { RefundRefused, type PaymentProvider, type ProviderRefundReason } from './provider';
import { centsLeft, copiesLeft, exceedsLeft, failRefund, lockPayment, reserveRefund, settleRefund, type LockedPayment } from './refund-ledger';

/** The error-level line an operator alerts on: a refund refused for good waits for an admin. */
export const REFUND_PARKED_ALERT = 'refund refused by the provider; parked FAILED until an admin retries it';

/** The provider's idempotency key for the refund of one order's cancel; a refusal needs a new one. */
export const refundIdempotencyKey = (orderId: string, refusals = 0) => `order-cancelled-refund-${orderId.toLowerCase()}${refusals > 0 ? `-retry-${refusals}` : ''}`;

/** The key of any refund: the cancel's by its order, an ADMIN's by its own id. */
function idempotencyKeyOf(refund: Refund): string {
  if (refund.origin !== null && refund.orderId) return refundIdempotencyKey(refund.orderId, refund.refusals);
  return `refund-${refund.id}${refund.refusals > 0 ? `-retry-${refund.refusals}` : ''}`;
}

const PROVIDER_REASONS: Partial<Record<string, ProviderRefundReason>> = { REQUESTED_BY_CUSTOMER: 'requested_by_customer', DUPLICATE: 'duplicate', FRAUDULENT: 'fraudulent' };

/** A refund as REST and GraphQL show it: CONTRACT §11's shape plus why it failed. */
export interface RefundResponse {
  refundId: string;
  paymentId: string;
  orderId: string | null;
  amount: number;
  reason: string;
  note: string | null;
  items: RefundItem[];
  restock: boolean;
  status: RefundStatus;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export function toRefundResponse(refund: Refund): RefundResponse {
  return {
    refundId: refund.id,
    paymentId: refund.paymentId,
    orderId: refund.orderId,
    amount: fromCents(refund.amountCents),
    reason: refund.reason,
    note: refund.note,
    items: refund.items,
    restock: refund.restock,
    status: refund.status,
    failureReason: refund.failureReason,
    createdAt: contractTimestamp(refund.createdAt),
    updatedAt: contractTimestamp(refund.updatedAt),
  };
}

/** The refunds of these payments, oldest first. */
export function refundsOf(manager: EntityManager, paymentIds: string[]): Promise<Refund[]> {
  return paymentIds.length === 0 ? Promise.resolve([]) : manager.find(Refund, { where: { paymentId: In(paymentIds) }, order: { createdAt: 'ASC', id: 'ASC' } });
}

const refundNotFound = (id: string) => notFound(`Refund not found: ${id}`, 'REFUND_NOT_FOUND');

export class Refunds {
  constructor(
    private readonly db: Database,
    private readonly provider: PaymentProvider,
    private readonly logger: Logger,
  ) {}

  /** An ADMIN's refund of part (or the rest) of a SUCCESS payment: 201 with the refund as it stands. */
  async create(principal: Principal, paymentId: string, request: CreateRefundRequest): Promise<RefundResponse> {
    assertRole(principal, 'ADMIN');
    if ((request.amount === undefined) === (request.items === undefined)) throw validationFailed(['amount: exactly one of amount or items must be given']);
    if (request.restock && !request.items) throw validationFailed(['restock: only a refund of items names copies to put back']);
    const { refund, payment } = await this.db.transaction(async (manager) => {
      const locked = await lockPayment(this.db, manager, paymentId);
      const { payment } = locked;
      if (payment.status !== 'SUCCESS') throw conflict(`Payment ${payment.id} is ${payment.status}, not SUCCESS: nothing to refund`, 'PAYMENT_NOT_REFUNDABLE');
      const items = request.items ? itemsToRefund(locked, request.items) : [];
      const amountCents = request.amount !== undefined ? toCents(request.amount) : items.reduce((sum, item) => sum + item.cents, 0);
      const row = newRefund(payment, {
        amountCents,
        reason: request.reason,
        note: request.note ?? null,
        items: items.map(({ bookId, quantity }) => ({ bookId, quantity })),
        restock: request.restock ?? false,
        origin: null,
      });
      return { refund: await reserveRefund(manager, locked, row), payment };
    });
    this.logger.info({ refundId: refund.id, paymentId, amountCents: refund.amountCents, reason: refund.reason, admin: principal.userId }, 'refund made by an admin');
    return toRefundResponse(await this.request(refund, payment));
  }

  /** A payment's refunds, oldest first: its owner or an ADMIN (anyone else is told it does not exist). */
  async listOf(principal: Principal, paymentId: string): Promise<RefundResponse[]> {
    const payment = await this.db.manager.findOne(Payment, { where: { id: paymentId } });
    if (!payment || !payment.paymentIntentId || !isSelfOrAdmin(principal, payment.userId)) throw notFound(`Payment not found: ${paymentId}`, 'PAYMENT_NOT_FOUND');
    return (await refundsOf(this.db.manager, [paymentId])).map(toRefundResponse);
  }

  /** `order-cancelled`: what is left of the paid payment is refunded, once, whatever the deliveries. */
  async refundCancelled(event: OrderCancelledEvent): Promise<void> {
    const orderId = event.orderId.toLowerCase();
    const payment = await this.db.manager.findOne(Payment, { where: { id: event.paymentId.toLowerCase() } });
    if (!payment) {
      this.logger.warn({ orderId, paymentId: event.paymentId }, 'cancelled order for an unknown payment; nothing to refund');
      return;
    }
    if (payment.status !== 'SUCCESS' || !payment.paymentIntentId) {
      this.logger.info({ orderId, paymentId: payment.id, status: payment.status }, 'cancelled order whose payment holds no money; nothing to refund');
      return;
    }
    await this.settleInFlight(payment);
    const refund = await this.refundOfCancel(payment.id, orderId);
    // FAILED waits for an admin; SUCCEEDED is done. Only a PENDING refund is asked (again) of the provider.
    if (refund?.status !== 'PENDING') {
      this.logger.info({ orderId, paymentId: payment.id, refundId: refund?.id, status: refund?.status ?? 'nothing left' }, 'cancelled order whose refund is already handled');
      return;
    }
    await this.request(refund, payment);
  }

  /**
   * An ADMIN's refund still being asked of the provider, or whose answer was lost (parked FAILED
   * `provider_unavailable`, maybe made there), holds money the provider may refuse, and a cancel
   * refunds only what is left: each is asked again under its own key first (the provider answers a
   * key once, so this refunds nothing twice; one whose request died with its process is completed
   * this way), so that what it does not get goes to the cancel. A passing failure rejects, and the
   * cancel is redelivered.
   */
  private async settleInFlight(payment: Payment): Promise<void> {
    const unanswered = await this.db.manager.find(Refund, {
      where: [
        { paymentId: payment.id, status: 'PENDING', providerRefundId: IsNull(), origin: IsNull() },
        { paymentId: payment.id, status: 'FAILED', failureCode: 'provider_unavailable', origin: IsNull() },
      ],
    });
    for (const refund of unanswered) await this.request(await this.reopen(refund), payment);
  }

  /** A refund whose answer was lost, PENDING again (same key: its refusals unchanged) to be asked again; any other as it is. */
  private async reopen(refund: Refund): Promise<Refund> {
    if (refund.status !== 'FAILED') return refund;
    const result = await this.db.manager.update(
      Refund,
      { id: refund.id, refusals: refund.refusals, status: 'FAILED', failureCode: 'provider_unavailable' },
      { status: 'PENDING', updatedAt: new Date() },
    );
    return result.affected === 1 ? Object.assign(refund, { status: 'PENDING' as const }) : refund;
  }

  /**
   * The cancel's refund row, made PENDING on the first delivery for what is left of the payment and
   * the copies no refund took; a concurrent delivery reads the winner's. Undefined when earlier
   * refunds left nothing.
   */
  private async refundOfCancel(paymentId: string, orderId: string): Promise<Refund | undefined> {
    const origin = `order-cancelled:${orderId}`;
    return this.db.transaction(async (manager) => {
      const locked = await lockPayment(this.db, manager, paymentId);
      const existing = locked.refunds.find((refund) => refund.origin === origin);
      if (existing) return existing;
      const left = centsLeft(locked.payment, locked.refunds);
      if (left <= 0) return undefined;
      const items = [...copiesLeft(locked.items, locked.refunds)].filter(([, quantity]) => quantity > 0).map(([bookId, quantity]) => ({ bookId, quantity }));
      // The book service puts a cancelled order's copies back on `order-cancelled` itself.
      const row = newRefund(locked.payment, { amountCents: left, reason: 'REQUESTED_BY_CUSTOMER', note: null, items, restock: true, origin });
      return reserveRefund(manager, locked, Object.assign(row, { orderId }));
    });
  }

  /**
   * Asks the provider for a PENDING refund under the key of its refusals so far. A refusal for good
   * parks it; any other failure rejects (an ADMIN's refund is parked FAILED under the same key
   * first). Every write is conditional on the refusals read, so a stale attempt cannot overwrite a
   * newer one.
   */
  private async request(refund: Refund, payment: Payment): Promise<Refund> {
    const { id, refusals } = refund;
    let answer;
    try {
      answer = await this.provider.refund({
        paymentIntentId: payment.paymentIntentId ?? '',
        amountCents: refund.amountCents,
        reason: PROVIDER_REASONS[refund.reason],
        // What the refund's row holds, never what the payment learnt since: asked again under its key, the request must be the same.
        metadata: { refundId: id, attempt: String(refusals), orderId: refund.orderId ?? '', paymentId: payment.id },
        idempotencyKey: idempotencyKeyOf(refund),
      });
    } catch (error) {
      if (error instanceof RefundRefused) return this.park(refund, error);
      if (refund.origin === null)
        await this.db.manager.update(
          Refund,
          { id, refusals, status: 'PENDING' },
          { status: 'FAILED', failureCode: 'provider_unavailable', failureReason: 'The payment provider could not be reached; retry the refund', updatedAt: new Date() },
        );
      throw error;
    }
    // A charge already refunded in full gave the cancel's money back; an ADMIN's refund then has nothing to take.
    if (answer === undefined && refund.origin === null)
      return this.park(refund, new RefundRefused('charge_already_refunded', 'The charge was already refunded in full', { cause: undefined }));
    if (answer === undefined || answer.succeeded) await this.db.transaction((manager) => settleRefund(this.db, manager, id, new Date(), answer?.id, refusals));
    else if (answer.failed) await this.db.transaction((manager) => failRefund(this.db, manager, id, refusals, new Date()));
    else await this.db.manager.update(Refund, { id, refusals, status: 'PENDING' }, { providerRefundId: answer.id, failureCode: null, failureReason: null, updatedAt: new Date() });
    this.logger.info({ orderId: refund.orderId, paymentId: payment.id, refundId: id, providerRefundId: answer?.id }, 'refund requested');
    return this.db.manager.findOneOrFail(Refund, { where: { id } });
  }

  /** FAILED with the refusal's reason (and, for a cancel's refund, `payment-refund-failed`), in one transaction. */
  private async park(refund: Refund, refusal: RefundRefused): Promise<Refund> {
    const parked = await this.db.transaction(async (manager) => {
      const changes = { status: 'FAILED' as const, refusals: refund.refusals + 1, failureCode: refusal.code, failureReason: refusal.reason, updatedAt: new Date() };
      const result = await manager.update(Refund, { id: refund.id, refusals: refund.refusals, status: 'PENDING' }, changes);
      if (result.affected !== 1) return false;
      const payment = await manager.findOneOrFail(Payment, { where: { id: refund.paymentId } });
      if (refund.origin !== null) await publishRefundFailed(manager, payment, refund.orderId ?? '', refusal.code);
      return true;
    });
    if (parked) {
      // Error level: money owed to a customer now waits for a person; nothing retries it by itself.
      this.logger.error({ err: refusal.cause, orderId: refund.orderId, paymentId: refund.paymentId, refundId: refund.id, code: refusal.code }, REFUND_PARKED_ALERT);
    }
    return this.db.manager.findOneOrFail(Refund, { where: { id: refund.id } });
  }

  /** Refunds in one status (ADMIN), oldest first: the queue an operator works through. */
  async list(principal: Principal, status: RefundStatus): Promise<RefundResponse[]> {
    assertRole(principal, 'ADMIN');
    const rows = await this.db.manager.find(Refund, { where: { status }, order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map(toRefundResponse);
  }

  /**
   * An admin asks the provider again for a FAILED refund (anything else is 409, so nothing is
   * refunded twice), if it still fits in what is left of the payment (409 otherwise). Answers with
   * the refund as it now stands: SUCCEEDED, or FAILED again with the new reason. A passing failure
   * puts it back to FAILED under the same key and rejects (502).
   */
  async retry(principal: Principal, refundId: string): Promise<RefundResponse> {
    assertRole(principal, 'ADMIN');
    const found = await this.db.manager.findOne(Refund, { where: { id: refundId } });
    if (!found) throw refundNotFound(refundId);
    const { refund, payment } = await this.db.transaction(async (manager) => {
      const locked = await lockPayment(this.db, manager, found.paymentId);
      const current = locked.refunds.find((one) => one.id === refundId);
      if (current?.status !== 'FAILED') throw conflict(`Refund ${refundId} is not FAILED`, 'REFUND_NOT_FAILED');
      const left = centsLeft(locked.payment, locked.refunds, refundId);
      if (current.amountCents > left) throw exceedsLeft(left);
      await manager.update(Refund, { id: refundId, refusals: current.refusals, status: 'FAILED' }, { status: 'PENDING', updatedAt: new Date() });
      return { refund: Object.assign(current, { status: 'PENDING' as const }), payment: locked.payment };
    });
    this.logger.info({ refundId, paymentId: payment.id, orderId: refund.orderId, admin: principal.userId }, 'refund retried by an admin');
    try {
      return toRefundResponse(await this.request(refund, payment));
    } catch (error) {
      await this.db.manager.update(Refund, { id: refund.id, refusals: refund.refusals, status: 'PENDING' }, { status: 'FAILED', updatedAt: new Date() });
      throw error;
    }
  }
}

/** The requested copies valued at the unit price paid: 400 for a book the payment does not have, 409 for more copies than are left. */
function itemsToRefund(locked: LockedPayment, requested: { bookId: string; quantity: number }[]): (RefundItem & { cents: number })[] {
  const left = copiesLeft(locked.items, locked.refunds);
  return requested.map(({ bookId, quantity }) => {
    const id = bookId.toLowerCase();
    const line = locked.items.find((item) => item.bookId.toLowerCase() === id);
    if (!line) throw badRequest(`Book ${id} is not in payment ${locked.payment.id}`, 'REFUND_ITEM_NOT_IN_PAYMENT');
    const copies = left.get(id) ?? 0;
    if (quantity > copies) throw conflict(`Refund exceeds the copies left of book ${id}: ${copies}`, 'REFUND_EXCEEDS_COPIES_LEFT');
    return { bookId: id, quantity, cents: quantity * line.unitPriceCents };
  });
}

function newRefund(
  payment: Payment,
  fields: { amountCents: number; reason: RefundReason; note: string | null; items: RefundItem[]; restock: boolean; origin: string | null },
): Refund {
  const now = new Date();
  return Object.assign(new Refund(), {
    id: randomUUID(),
    paymentId: payment.id,
    orderId: payment.orderId,
    ...fields,
    status: 'PENDING' as const,
    refusals: 0,
    failureCode: null,
    failureReason: null,
    providerRefundId: null,
    createdAt: now,
    updatedAt: now,
  });
}
