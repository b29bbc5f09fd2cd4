/**
 * Refunds (CONTRACT §6, §11): `order-cancelled` has the payment's PaymentIntent refunded in full, and
 * each refund is a row that tells where it stands. The provider call is keyed by the orderId (and
 * the number of refusals), so an event delivered again refunds once. A passing failure rejects and
 * the consumer redelivers the event until the provider takes it. A refusal for good parks the
 * refund FAILED with its reason and publishes `payment-refund-failed`, so the partition moves on; an
 * admin retries it with a new key. The payment becomes REFUNDED when the provider's
 * `charge.refunded` webhook arrives (webhook.ts), as for a refund made in the provider's dashboard.
 */
import { randomUUID } from 'node:crypto';
import { In, Not, type EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import { isUniqueViolation } from '../../platform/database';
import type { OrderCancelledEvent } from '../../platform/events/topics';
import type { Logger } from '../../platform/logger';
import { assertRole, type Principal } from '../../platform/auth';
import { conflict, contractTimestamp, notFound } from '../../platform/errors';
import { fromCents } from '../../platform/money';
import { Payment, Refund, type RefundItem, type RefundStatus } from './entities';
import { publishRefundFailed } from './events';
import { RefundRefused, type PaymentProvider } from './provider';

/** The error-level line an operator alerts on: a refund refused for good waits for an admin. */
export const REFUND_PARKED_ALERT = 'refund refused by the provider; parked FAILED until an admin retries it';

/** The provider's idempotency key for the refund of one order; a refusal needs a new one. */
export const refundIdempotencyKey = (orderId: string, refusals = 0) => `order-cancelled-refund-${orderId.toLowerCase()}${refusals > 0 ? `-retry-${refusals}` : ''}`;

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

/**
 * The provider reported the payment refunded in full (`charge.refunded`): refunds it had accepted as
 * pending are done.
 */
export async function settlePendingRefunds(manager: EntityManager, paymentId: string): Promise<void> {
  await manager.update(Refund, { paymentId, status: 'PENDING', providerRefundId: Not('') }, { status: 'SUCCEEDED', updatedAt: new Date() });
}

const refundNotFound = (id: string) => notFound(`Refund not found: ${id}`, 'REFUND_NOT_FOUND');

export class Refunds {
  constructor(
    private readonly db: Database,
    private readonly provider: PaymentProvider,
    private readonly logger: Logger,
  ) {}

  /** `order-cancelled`: the paid payment is refunded in full, once, whatever the deliveries. */
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
    const refund = await this.refundOfCancel(payment, orderId, event);
    // FAILED waits for an admin; SUCCEEDED is done. Only a PENDING refund is asked (again) of the provider.
    if (refund.status !== 'PENDING') {
      this.logger.info({ orderId, paymentId: payment.id, refundId: refund.id, status: refund.status }, 'cancelled order whose refund is already handled');
      return;
    }
    await this.request(refund, payment);
  }

  /** The cancel's refund row, made PENDING on the first delivery; a concurrent delivery reads the winner's. */
  private async refundOfCancel(payment: Payment, orderId: string, event: OrderCancelledEvent): Promise<Refund> {
    const origin = `order-cancelled:${orderId}`;
    const existing = await this.db.manager.findOne(Refund, { where: { origin } });
    if (existing) return existing;
    const now = new Date();
    const refund = Object.assign(new Refund(), {
      id: randomUUID(),
      paymentId: payment.id,
      orderId,
      origin,
      amountCents: payment.amountCents,
      reason: 'REQUESTED_BY_CUSTOMER',
      note: null,
      items: event.items.map((item) => ({ bookId: item.bookId.toLowerCase(), quantity: item.quantity })),
      // The book service puts a cancelled order's copies back on `order-cancelled` itself.
      restock: true,
      status: 'PENDING' as const,
      refusals: 0,
      failureCode: null,
      failureReason: null,
      providerRefundId: null,
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.db.manager.insert(Refund, refund);
      return refund;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return this.db.manager.findOneOrFail(Refund, { where: { origin } });
    }
  }

  /**
   * Asks the provider for a PENDING refund under the key of its refusals so far. A refusal for good
   * parks it; any other failure rejects and leaves it PENDING under the same key. Every write is
   * conditional on the refusals read, so a stale attempt cannot overwrite a newer one.
   */
  private async request(refund: Refund, payment: Payment): Promise<Refund> {
    const { id, refusals } = refund;
    let answer;
    try {
      answer = await this.provider.refundInFull({
        paymentIntentId: payment.paymentIntentId ?? '',
        metadata: { orderId: refund.orderId ?? '', paymentId: payment.id },
        idempotencyKey: refundIdempotencyKey(refund.orderId ?? refund.id, refusals),
      });
    } catch (error) {
      if (error instanceof RefundRefused) return this.park(refund, error);
      throw error;
    }
    const status: RefundStatus = answer === undefined || answer.succeeded ? 'SUCCEEDED' : 'PENDING';
    await this.db.manager.update(
      Refund,
      { id, refusals, status: Not('FAILED') },
      { status, providerRefundId: answer?.id ?? null, failureCode: null, failureReason: null, updatedAt: new Date() },
    );
    this.logger.info({ orderId: refund.orderId, paymentId: payment.id, refundId: id, providerRefundId: answer?.id, status }, 'refund requested');
    return this.db.manager.findOneOrFail(Refund, { where: { id } });
  }

  /** FAILED with the refusal's reason, and `payment-refund-failed`, in one transaction. */
  private async park(refund: Refund, refusal: RefundRefused): Promise<Refund> {
    const parked = await this.db.transaction(async (manager) => {
      const changes = { status: 'FAILED' as const, refusals: refund.refusals + 1, failureCode: refusal.code, failureReason: refusal.reason, updatedAt: new Date() };
      const result = await manager.update(Refund, { id: refund.id, refusals: refund.refusals, status: 'PENDING' }, changes);
      if (result.affected !== 1) return false;
      const payment = await manager.findOneOrFail(Payment, { where: { id: refund.paymentId } });
      await publishRefundFailed(manager, payment, refund.orderId ?? '', refusal.code);
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
   * refunded twice). Answers with the refund as it now stands: SUCCEEDED, or FAILED again with the
   * new reason. A passing failure puts it back to FAILED under the same key and rejects (502).
   */
  async retry(principal: Principal, refundId: string): Promise<RefundResponse> {
    assertRole(principal, 'ADMIN');
    const refund = await this.db.manager.findOne(Refund, { where: { id: refundId } });
    if (!refund) throw refundNotFound(refundId);
    const claimed = await this.db.manager.update(Refund, { id: refund.id, refusals: refund.refusals, status: 'FAILED' }, { status: 'PENDING', updatedAt: new Date() });
    if (refund.status !== 'FAILED' || claimed.affected !== 1) throw conflict(`Refund ${refundId} is not FAILED`, 'REFUND_NOT_FAILED');
    const payment = await this.db.manager.findOneOrFail(Payment, { where: { id: refund.paymentId } });
    this.logger.info({ refundId, paymentId: payment.id, orderId: refund.orderId, admin: principal.userId }, 'refund retried by an admin');
    try {
      return toRefundResponse(await this.request(Object.assign(refund, { status: 'PENDING' }), payment));
    } catch (error) {
      await this.db.manager.update(Refund, { id: refund.id, refusals: refund.refusals, status: 'PENDING' }, { status: 'FAILED', updatedAt: new Date() });
      throw error;
    }
  }
}
