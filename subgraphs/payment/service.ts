/**
 * Checkouts and payments: idempotent checkout by checkoutId (one payment, one stock hold and one
 * PaymentIntent, however many times or however concurrently it is sent; a new hold and intent once
 * the hold ended unpaid, holds.ts), owner-only reads, and sync-order.
 */
import { createHash } from 'node:crypto';
import { In, IsNull, Not } from 'typeorm';
import type { Database } from '../../platform/database';
import { isUniqueViolation } from '../../platform/database';
import type { Logger } from '../../platform/logger';
import { centsText, fromCents } from '../../platform/money';
import { isSelfOrAdmin, type Principal } from '../../platform/auth';
import { AppError, conflict, contractTimestamp, forbidden, notFound, validationFailed } from '../../platform/errors';
import { nameBasedUuid } from '../../platform/ids';
import { currentTraceparent } from '../../platform/telemetry/spans';
import type { CheckoutDirectory } from './clients';
import { holdIdOf, type CheckoutHolds } from './holds';
import type { CreateCheckoutRequest, PaymentResponse } from './dto';
import { Payment, PaymentItem, type Refund } from './entities';
import { publishPaymentCreated, publishPaymentSuccess } from './events';
import { providerFailed, type PaymentProvider } from './provider';
import { refundsOf, toRefundResponse } from './refunds';

/**
 * The largest total a checkout may have: Stripe takes at most eight digits in the currency's smallest
 * unit ($999,999.99). A bigger cart is the client's mistake (400), not a provider failure (502).
 */
export const MAX_CHECKOUT_CENTS = 99_999_999;

export function cartFingerprint(items: { bookId: string; quantity: number }[]): string {
  const canonical = items
    .map((item) => `${item.bookId.toLowerCase()}:${item.quantity}`)
    .sort()
    .join(',');
  return createHash('sha256').update(canonical).digest('hex');
}

/** A full refund need not have a row (one made in the provider's dashboard): REFUNDED is the provider's word. */
function refundedCents(payment: Payment, refunds: Refund[]): number {
  if (payment.status === 'REFUNDED') return payment.amountCents;
  return refunds.filter((refund) => refund.status === 'SUCCEEDED').reduce((sum, refund) => sum + refund.amountCents, 0);
}

export function toPaymentResponse(payment: Payment, items: PaymentItem[], refunds: Refund[]): PaymentResponse {
  return {
    paymentId: payment.id,
    checkoutId: payment.checkoutId,
    orderId: payment.orderId,
    amount: fromCents(payment.amountCents),
    status: payment.status,
    paymentIntentId: payment.paymentIntentId ?? '',
    clientSecret: payment.clientSecret ?? '',
    items: [...items]
      .sort((a, b) => a.position - b.position)
      .map((item) => ({ bookId: item.bookId, bookTitle: item.bookTitle, quantity: item.quantity, price: fromCents(item.unitPriceCents) })),
    refundedAmount: fromCents(refundedCents(payment, refunds)),
    refunds: refunds.map(toRefundResponse),
    failureReason: payment.status === 'FAILED' ? payment.failureReason : null,
    // While it waits to be paid: the copies of its tracked books are held until then (CONTRACT §4).
    holdExpiresAt: payment.status === 'PAYMENT_PENDING' && payment.holdExpiresAt ? contractTimestamp(payment.holdExpiresAt) : null,
  };
}

/** What GraphQL may show of a payment: the REST response plus its owner and times. */
export interface PaymentView extends PaymentResponse {
  userId: string;
  currency: string;
  createdAt: string;
  updatedAt: string;
}

function toPaymentView(payment: Payment, items: PaymentItem[], refunds: Refund[]): PaymentView {
  return {
    ...toPaymentResponse(payment, items, refunds),
    userId: payment.userId,
    currency: payment.currency,
    createdAt: contractTimestamp(payment.createdAt),
    updatedAt: contractTimestamp(payment.updatedAt),
  };
}

const paymentNotFound = (id: string) => notFound(`Payment not found: ${id}`, 'PAYMENT_NOT_FOUND');

export class PaymentService {
  constructor(
    private readonly db: Database,
    private readonly provider: PaymentProvider,
    private readonly directory: CheckoutDirectory,
    private readonly currency: string,
    private readonly logger: Logger,
    private readonly holds: CheckoutHolds,
    /** `REQUIRE_VERIFIED_EMAIL`: checkout only for a token whose `email_verified` claim is true. */
    private readonly requireVerifiedEmail = false,
  ) {}

  async checkout(principal: Principal, request: CreateCheckoutRequest): Promise<PaymentResponse> {
    if (this.requireVerifiedEmail && !principal.emailVerified) {
      throw new AppError('EMAIL_NOT_VERIFIED', 'Verify your e-mail address before checking out: open the link we sent you, then log in again', 403);
    }
    const checkoutId = request.checkoutId.toLowerCase();
    const items = request.items.map((item) => ({ bookId: item.bookId.toLowerCase(), quantity: item.quantity }));
    const fingerprint = cartFingerprint(items);

    let payment = (await this.existingCheckout(principal, checkoutId, fingerprint)) ?? (await this.reserve(principal, checkoutId, items, fingerprint));
    // Twice at most: a hold that ran out while its intent was being made is held once more.
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      if (this.holds.needsNewHold(payment)) payment = await this.holds.holdAgain(payment);
      if (!payment.paymentIntentId && payment.status === 'PAYMENT_PENDING') await this.attachIntent(payment);
      if (payment.paymentIntentId) break;
    }
    // Still no intent: the provider took longer than a whole hold.
    if (!payment.paymentIntentId) throw providerFailed(new Error('the stock hold ran out twice before the PaymentIntent was made'));
    if (payment.holdExpiresAt) this.holds.wake(payment.holdExpiresAt);
    return this.response(payment);
  }

  /**
   * A new checkout: the book service prices the cart and holds its tracked lines in one step
   * (CONTRACT §4: 404 unknown book, 409 too few copies or past the customer's hold cap), then the
   * payment row reserves the checkoutId. Its id is named by the checkoutId, so concurrent identical
   * requests ask for the same hold; the one whose insert loses continues with the winner's row.
   */
  private async reserve(principal: Principal, checkoutId: string, items: { bookId: string; quantity: number }[], fingerprint: string): Promise<Payment> {
    const id = nameBasedUuid('payment', checkoutId);
    const holdId = holdIdOf(id, 1);
    const buyer = await this.directory.buyer(principal.userId);
    const held = await this.directory.hold({ paymentId: id, holdId, userId: principal.userId, items });
    const priced = new Map(held.books.map((book) => [book.id.toLowerCase(), book]));
    const lines = items.map((item, position) => {
      const book = priced.get(item.bookId);
      // The book service answers every book of the cart or refuses the hold (404).
      if (!book) throw new Error(`the stock hold did not price book ${item.bookId}`);
      return Object.assign(new PaymentItem(), { position, bookId: item.bookId, bookTitle: book.title, quantity: item.quantity, unitPriceCents: book.priceCents });
    });
    const amountCents = lines.reduce((sum, line) => sum + line.unitPriceCents * line.quantity, 0);
    if (amountCents > MAX_CHECKOUT_CENTS) {
      await this.releaseQuietly(id, holdId);
      throw validationFailed([`items: the total must not be greater than ${centsText(MAX_CHECKOUT_CENTS)}`]);
    }
    const now = new Date();
    const reservation = Object.assign(new Payment(), {
      id,
      checkoutId,
      userId: principal.userId,
      cartFingerprint: fingerprint,
      amountCents,
      currency: this.currency,
      status: 'PAYMENT_PENDING' as const,
      paymentIntentId: null,
      clientSecret: null,
      orderId: null,
      paidAt: null,
      failureReason: null,
      customerEmail: buyer.email,
      customerFirstName: buyer.firstName,
      customerPhone: buyer.phoneNumber,
      traceParent: currentTraceparent(),
      holdId: held.expiresAt ? holdId : null,
      holdNo: held.expiresAt ? 1 : 0,
      holdExpiresAt: held.expiresAt,
      createdPublished: false,
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.db.transaction(async (manager) => {
        await manager.insert(Payment, reservation);
        await manager.insert(
          PaymentItem,
          lines.map((line) => ({ ...line, paymentId: reservation.id })),
        );
      });
    } catch (error) {
      if (!isUniqueViolation(error)) {
        await this.releaseQuietly(id, holdId);
        throw error;
      }
      // A concurrent request with this checkoutId won the insert: continue with its row.
      const winner = await this.existingCheckout(principal, checkoutId, fingerprint).catch(async (refusal: unknown) => {
        await this.releaseQuietly(id, holdId);
        throw refusal;
      });
      if (!winner) throw error;
      // A checkoutId taken before payments were named by it: the hold asked for here is not its.
      if (winner.id !== id) await this.releaseQuietly(id, holdId);
      return winner;
    }
    await this.holds.replaced(held.replacedPaymentIds);
    return reservation;
  }

  /** A hold that will not be used goes back at once; if that fails, it runs out by itself. */
  private async releaseQuietly(paymentId: string, holdId: string): Promise<void> {
    try {
      await this.directory.release({ paymentId, holdId });
    } catch (error) {
      this.logger.warn({ err: error, paymentId }, 'a stock hold could not be released; it ends when it expires');
    }
  }

  /** The payment already holding this checkoutId, if it is this caller's same cart; 409 otherwise. */
  private async existingCheckout(principal: Principal, checkoutId: string, fingerprint: string): Promise<Payment | null> {
    const payment = await this.db.manager.findOne(Payment, { where: { checkoutId } });
    if (!payment) return null;
    if (payment.userId !== principal.userId) throw conflict(`checkoutId ${checkoutId} is already used`, 'CHECKOUT_ID_IN_USE');
    if (payment.cartFingerprint !== fingerprint) throw conflict(`checkoutId ${checkoutId} was used for a different cart`, 'CHECKOUT_CART_MISMATCH');
    return payment;
  }

  /**
   * Creates the PaymentIntent and attaches it. The idempotency key is the checkoutId (with the
   * hold's number after the first hold), so concurrent or retried calls get the same intent, and a
   * checkout held anew gets a new one. payment-created is published once, with the first intent attached.
   */
  private async attachIntent(payment: Payment): Promise<void> {
    const intent = await this.provider.createIntent({
      amountCents: payment.amountCents,
      currency: payment.currency,
      metadata: { checkoutId: payment.checkoutId, paymentId: payment.id, userId: payment.userId },
      idempotencyKey: payment.holdNo > 1 ? `checkout-${payment.checkoutId}-hold-${payment.holdNo}` : `checkout-${payment.checkoutId}`,
    });
    const attached = await this.db.transaction(async (manager) => {
      const result = await manager.update(
        Payment,
        { id: payment.id, holdNo: payment.holdNo, status: 'PAYMENT_PENDING', paymentIntentId: IsNull() },
        { paymentIntentId: intent.id, clientSecret: intent.clientSecret, updatedAt: new Date() },
      );
      if (result.affected !== 1) return false;
      if ((await manager.update(Payment, { id: payment.id, createdPublished: false }, { createdPublished: true })).affected === 1) {
        const items = await manager.find(PaymentItem, { where: { paymentId: payment.id } });
        await publishPaymentCreated(manager, payment, items);
      }
      return true;
    });
    if (attached) {
      this.logger.info({ paymentId: payment.id, paymentIntentId: intent.id, holdNo: payment.holdNo }, 'checkout created');
      Object.assign(payment, { paymentIntentId: intent.id, clientSecret: intent.clientSecret });
      return;
    }
    const now = await this.db.manager.findOneOrFail(Payment, { where: { id: payment.id } });
    // Its hold ran out (or it was held anew) while the intent was made: that intent must not stay payable.
    if (now.paymentIntentId !== intent.id) {
      await this.provider
        .cancelIntent(intent.id)
        .catch((error: unknown) => this.logger.warn({ err: error, paymentId: payment.id }, 'an intent made too late could not be cancelled'));
    }
    Object.assign(payment, now);
  }

  private async response(payment: Payment): Promise<PaymentResponse> {
    const fresh = await this.db.manager.findOneOrFail(Payment, { where: { id: payment.id } });
    return (await this.withItems([fresh], toPaymentResponse))[0];
  }

  /** The caller's payment; someone else's, or a checkout still without its intent, is not found. */
  private async owned(principal: Principal, id: string): Promise<Payment> {
    const payment = await this.db.manager.findOne(Payment, { where: { id, userId: principal.userId, paymentIntentId: Not(IsNull()) } });
    if (!payment) throw paymentNotFound(id);
    return payment;
  }

  async getPayment(principal: Principal, id: string): Promise<PaymentResponse> {
    return this.response(await this.owned(principal, id));
  }

  async listMine(principal: Principal): Promise<PaymentResponse[]> {
    const payments = await this.db.manager.find(Payment, {
      where: { userId: principal.userId, paymentIntentId: Not(IsNull()) },
      order: { createdAt: 'DESC', id: 'ASC' },
    });
    return this.withItems(payments, toPaymentResponse);
  }

  /** Batch lookup for federation references, unfiltered: callers apply their own access rule. */
  async findByIds(ids: readonly string[]): Promise<PaymentResponse[]> {
    if (ids.length === 0) return [];
    return this.withItems(await this.db.manager.find(Payment, { where: { id: In([...ids]), paymentIntentId: Not(IsNull()) } }), toPaymentResponse);
  }

  /**
   * Batch read for GraphQL (references and `payment`), in the order of `ids`: each payment for its
   * owner or an ADMIN (the dashboards); anyone else is told it does not exist, as REST tells them.
   * One query for the payments, one for their items.
   */
  async paymentsFor(principal: Principal, ids: readonly string[]): Promise<(PaymentView | AppError)[]> {
    const rows = ids.length === 0 ? [] : await this.db.manager.find(Payment, { where: { id: In([...ids]), paymentIntentId: Not(IsNull()) } });
    const views = await this.withItems(
      rows.filter((payment) => isSelfOrAdmin(principal, payment.userId)),
      toPaymentView,
    );
    const byId = new Map(views.map((view) => [view.paymentId, view]));
    return ids.map((id) => byId.get(id) ?? paymentNotFound(id));
  }

  /**
   * Batch read of each user's payments, newest first, in the order of `userIds`: for the user
   * themself or an ADMIN, FORBIDDEN otherwise. One query for every user's payments.
   */
  async paymentsOfUsers(principal: Principal, userIds: readonly string[]): Promise<(PaymentView[] | AppError)[]> {
    const allowed = userIds.filter((userId) => isSelfOrAdmin(principal, userId));
    const rows =
      allowed.length === 0 ? [] : await this.db.manager.find(Payment, { where: { userId: In(allowed), paymentIntentId: Not(IsNull()) }, order: { createdAt: 'DESC', id: 'ASC' } });
    const views = await this.withItems(rows, toPaymentView);
    return userIds.map((userId) => (isSelfOrAdmin(principal, userId) ? views.filter((view) => view.userId === userId) : forbidden()));
  }

  /** The payments with their items and refunds (one query each), mapped to a response or a view. */
  private async withItems<T>(payments: Payment[], map: (payment: Payment, items: PaymentItem[], refunds: Refund[]) => T): Promise<T[]> {
    if (payments.length === 0) return [];
    const ids = payments.map((p) => p.id);
    const [items, refunds] = await Promise.all([this.db.manager.find(PaymentItem, { where: { paymentId: In(ids) } }), refundsOf(this.db.manager, ids)]);
    return payments.map((payment) =>
      map(
        payment,
        items.filter((item) => item.paymentId === payment.id),
        refunds.filter((refund) => refund.paymentId === payment.id),
      ),
    );
  }

  /** Re-publishes `payment-success` for a SUCCESS payment whose order went missing. */
  async syncOrder(principal: Principal, id: string): Promise<void> {
    const payment = await this.owned(principal, id);
    if (payment.status !== 'SUCCESS') throw new AppError('PAYMENT_NOT_SUCCESS', 'Payment is not SUCCESS', 409);
    await this.db.transaction(async (manager) => {
      const items = await manager.find(PaymentItem, { where: { paymentId: id } });
      await publishPaymentSuccess(manager, payment, items, payment.paidAt ?? payment.updatedAt);
    });
  }
}
