/**
 * A checkout's stock hold from the payment's side (CONTRACT §4, §5). Checkout places the hold while
 * it prices the cart (service.ts); the book service keeps it (book/inventory.ts). Here: a checkout
 * asked for again after its hold ended gets a new one, and a hold that ran out unpaid ends its
 * payment.
 *
 * - The n-th hold of a payment is named by the payment and n, so retries and concurrent requests
 *   ask for the same hold, and the book service holds nothing twice.
 * - A hold ended (it ran out, or its payment failed): the same checkout again first cancels the
 *   PaymentIntent at the provider, so that it can no longer be paid, then holds anew and gets a new
 *   PaymentIntent under a new idempotency key. If the old intent could not be cancelled because it
 *   was paid, nothing new is made: its webhook settles the payment, and its order takes the copies.
 * - The expiry sweep: a PAYMENT_PENDING payment past its hold has its intent cancelled, then turns
 *   FAILED with `checkout_expired` and publishes `payment-failed`, which releases the copies. An
 *   intent found paid keeps its hold (the copies stay held until its order takes them): copies go
 *   back only once the money can no longer come. A checkout replaced by a newer one of the same
 *   customer (the book service says which) is swept the same way at once.
 *
 * Every replica sweeps; the conditional update makes each payment expire once, and cancelling an
 * intent twice is harmless.
 */
import { In, LessThanOrEqual, Not, IsNull } from 'typeorm';
import type { Database } from '../../platform/database';
import { CHECKOUT_EXPIRED } from '../../platform/events/topics';
import { nameBasedUuid } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import type { CheckoutDirectory } from './clients';
import { Payment, PaymentItem } from './entities';
import { publishPaymentFailed } from './events';
import type { PaymentProvider } from './provider';

/** Payments the sweep takes at a time. */
const SWEEP_PAGE = 100;
/** The longest the sweep sleeps: another replica's checkouts expire too. */
const SWEEP_IDLE_MS = 30_000;

export function holdIdOf(paymentId: string, holdNo: number): string {
  return nameBasedUuid('stock-hold', `${paymentId}:${holdNo}`);
}

export class CheckoutHolds {
  private timer: NodeJS.Timeout | undefined;
  /** When the next sweep is due (ms since the epoch). */
  private nextAt = Infinity;
  /** The earliest end of a hold told while a sweep ran. */
  private wokenFor = Infinity;
  private sweeping: Promise<void> | undefined;
  private stopped = true;

  constructor(
    private readonly db: Database,
    private readonly provider: PaymentProvider,
    private readonly directory: CheckoutDirectory,
    private readonly logger: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Whether the same checkout asked for again needs a new hold: its hold ran out, or its payment failed. */
  needsNewHold(payment: Payment): boolean {
    if (payment.holdNo === 0 || payment.holdExpiresAt === null) return false;
    if (payment.status === 'FAILED') return true;
    return payment.status === 'PAYMENT_PENDING' && payment.holdExpiresAt.getTime() <= this.clock().getTime();
  }

  /** The payment held anew, with no PaymentIntent yet; or as it is, when its old intent was paid after all. */
  async holdAgain(payment: Payment): Promise<Payment> {
    if (payment.paymentIntentId) {
      const status = await this.provider.cancelIntent(payment.paymentIntentId);
      if (status !== 'canceled') return payment;
    }
    const items = await this.db.manager.find(PaymentItem, { where: { paymentId: payment.id }, order: { position: 'ASC' } });
    const holdNo = payment.holdNo + 1;
    const holdId = holdIdOf(payment.id, holdNo);
    const held = await this.directory.hold({
      paymentId: payment.id,
      holdId,
      userId: payment.userId,
      items: items.map((item) => ({ bookId: item.bookId, quantity: item.quantity })),
    });
    const changes = {
      holdId: held.expiresAt ? holdId : null,
      holdNo,
      holdExpiresAt: held.expiresAt,
      status: 'PAYMENT_PENDING' as const,
      failureReason: null,
      paymentIntentId: null,
      clientSecret: null,
      updatedAt: this.clock(),
    };
    // A concurrent request for the same checkout asked for the same hold; the first one moves the payment on.
    await this.db.manager.update(Payment, { id: payment.id, holdNo: payment.holdNo, status: In(['PAYMENT_PENDING', 'FAILED']) }, changes);
    await this.replaced(held.replacedPaymentIds);
    this.logger.info({ paymentId: payment.id, holdNo }, 'checkout held again');
    return this.db.manager.findOneOrFail(Payment, { where: { id: payment.id } });
  }

  /** The customer's earlier checkouts whose holds a new one replaced: swept now. */
  async replaced(paymentIds: readonly string[]): Promise<void> {
    if (paymentIds.length === 0) return;
    const now = this.clock();
    await this.db.manager.update(Payment, { id: In([...paymentIds]), status: 'PAYMENT_PENDING' }, { holdExpiresAt: now });
    this.wake(now);
  }

  /** Ends the payments whose hold ran out; answers how many. */
  async expireDue(): Promise<number> {
    const now = this.clock();
    const due = await this.db.manager.find(Payment, {
      where: { status: 'PAYMENT_PENDING', holdExpiresAt: LessThanOrEqual(now) },
      order: { holdExpiresAt: 'ASC' },
      take: SWEEP_PAGE,
    });
    let expired = 0;
    for (const payment of due) {
      try {
        if (await this.expire(payment, now)) expired += 1;
      } catch (error) {
        this.logger.warn({ err: error, paymentId: payment.id }, 'an expired checkout could not be ended now; the next sweep tries again');
      }
    }
    return expired;
  }

  private async expire(payment: Payment, now: Date): Promise<boolean> {
    if (payment.paymentIntentId) {
      const status = await this.provider.cancelIntent(payment.paymentIntentId);
      // Paid, or being paid: the money is coming, and the copies stay held for its order.
      if (status !== 'canceled') return false;
    }
    const ended = await this.db.transaction(async (manager) => {
      // The intent it was read with: one attached since is cancelled by the next sweep first.
      const result = await manager.update(
        Payment,
        { id: payment.id, status: 'PAYMENT_PENDING', holdNo: payment.holdNo, paymentIntentId: payment.paymentIntentId ?? IsNull() },
        { status: 'FAILED', failureReason: CHECKOUT_EXPIRED, updatedAt: this.clock() },
      );
      if (result.affected !== 1) return false;
      // A checkout that never got its intent is known to nobody else: its hold is let go below.
      if (payment.paymentIntentId) await publishPaymentFailed(manager, { ...payment, status: 'FAILED' }, CHECKOUT_EXPIRED, now);
      return true;
    });
    if (ended && !payment.paymentIntentId && payment.holdId) await this.directory.release({ paymentId: payment.id, holdId: payment.holdId });
    if (ended) this.logger.info({ paymentId: payment.id }, 'checkout expired unpaid: its intent is cancelled and its copies released');
    return ended;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.nextAt = Infinity;
    await this.sweeping;
  }

  /** A hold ends at `at`: the sweep comes by then (it may be sleeping longer). */
  wake(at: Date): void {
    if (this.stopped) return;
    if (this.sweeping) {
      this.wokenFor = Math.min(this.wokenFor, at.getTime());
      return;
    }
    if (at.getTime() >= this.nextAt) return;
    this.schedule(Math.max(0, at.getTime() - this.clock().getTime() + 50));
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.nextAt = this.clock().getTime() + delayMs;
    this.timer = setTimeout(() => {
      this.nextAt = Infinity;
      this.sweeping = this.sweep().finally(() => {
        this.sweeping = undefined;
      });
    }, delayMs);
    this.timer.unref();
  }

  private async sweep(): Promise<void> {
    let next = SWEEP_IDLE_MS;
    try {
      if ((await this.expireDue()) === SWEEP_PAGE) next = 0;
      else {
        const soonest = await this.db.manager.findOne(Payment, {
          where: { status: 'PAYMENT_PENDING', holdExpiresAt: Not(IsNull()) },
          order: { holdExpiresAt: 'ASC' },
        });
        if (soonest?.holdExpiresAt) next = Math.min(SWEEP_IDLE_MS, Math.max(250, soonest.holdExpiresAt.getTime() - this.clock().getTime() + 50));
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'the expiry sweep failed; it runs again later');
    }
    next = Math.min(next, Math.max(0, this.wokenFor - this.clock().getTime() + 50));
    this.wokenFor = Infinity;
    if (!this.stopped) this.schedule(next);
  }
}
