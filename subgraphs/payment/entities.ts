/**
 * The payment service's tables. A payment row is written before the PaymentIntent exists; until
 * the intent is attached it is a reservation of the checkoutId, invisible to clients, which a retry
 * with the same checkoutId completes. Provider events are recorded so each is processed once.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { CartLineColumns } from '../../platform/cart-line';
import { centsColumn } from '../../platform/money';
import { TimestampColumn } from '../../platform/database';

export const PAYMENT_STATUSES = ['PAYMENT_PENDING', 'SUCCESS', 'FAILED', 'REFUNDED'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

@Entity({ name: 'payments' })
export class Payment {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'checkout_id', type: 'varchar', length: 36, unique: true })
  checkoutId!: string;

  @Column({ name: 'user_id', type: 'varchar', length: 36 })
  userId!: string;

  /** SHA-256 of the cart (sorted bookId:quantity), to tell a retry from a different cart. */
  @Column({ name: 'cart_fingerprint', type: 'varchar', length: 64 })
  cartFingerprint!: string;

  @Column({ name: 'amount', type: 'decimal', precision: 12, scale: 2, transformer: centsColumn })
  amountCents!: number;

  @Column({ type: 'varchar', length: 3 })
  currency!: string;

  @Column({ type: 'varchar', length: 16 })
  status!: PaymentStatus;

  @Column({ name: 'payment_intent_id', type: 'varchar', length: 255, nullable: true, unique: true })
  paymentIntentId!: string | null;

  @Column({ name: 'client_secret', type: 'varchar', length: 255, nullable: true })
  clientSecret!: string | null;

  @Column({ name: 'order_id', type: 'varchar', length: 36, nullable: true })
  orderId!: string | null;

  /** When the provider reported success; `payment-success` re-published by sync-order keeps this time. */
  @TimestampColumn('paid_at', { nullable: true })
  paidAt!: Date | null;

  @Column({ name: 'failure_reason', type: 'varchar', length: 255, nullable: true })
  failureReason!: string | null;

  /** The buyer as the user service knew them at checkout; carried by `payment-success`. */
  @Column({ name: 'customer_email', type: 'varchar', length: 100 })
  customerEmail!: string;

  @Column({ name: 'customer_first_name', type: 'varchar', length: 50 })
  customerFirstName!: string;

  @Column({ name: 'customer_phone', type: 'varchar', length: 16 })
  customerPhone!: string;

  /**
   * The W3C `traceparent` of the checkout that created the payment, when it was traced: the
   * provider's webhooks start traces of their own and link to it (webhook.ts).
   */
  @Column({ name: 'trace_parent', type: 'varchar', length: 64, nullable: true })
  traceParent!: string | null;

  /**
   * The stock hold of the checkout (service.ts, CONTRACT §4): its id at the book service, how many
   * holds the checkout has had (a hold that expired unpaid is placed anew, with a new
   * PaymentIntent), and when the current one ends; null when nothing of the cart is held.
   */
  @Column({ name: 'hold_id', type: 'varchar', length: 36, nullable: true })
  holdId!: string | null;

  @Column({ name: 'hold_no', type: 'int', default: 0 })
  holdNo!: number;

  @TimestampColumn('hold_expires_at', { nullable: true })
  holdExpiresAt!: Date | null;

  /** `payment-created` was published (with the first intent attached, whichever hold that was). */
  @Column({ name: 'created_published', type: 'boolean', default: false })
  createdPublished!: boolean;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('updated_at')
  updatedAt!: Date;
}

@Entity({ name: 'payment_items' })
export class PaymentItem extends CartLineColumns {
  @PrimaryColumn({ name: 'payment_id', type: 'varchar', length: 36 })
  paymentId!: string;

  @PrimaryColumn({ type: 'int' })
  position!: number;
}

@Entity({ name: 'provider_events' })
export class ProviderEvent {
  @PrimaryColumn({ type: 'varchar', length: 255 })
  id!: string;

  @Column({ type: 'varchar', length: 100 })
  type!: string;

  @Column({ name: 'payment_id', type: 'varchar', length: 36, nullable: true })
  paymentId!: string | null;

  /** What the event did: APPLIED, IGNORED (not in the transition table) or UNKNOWN_INTENT. */
  @Column({ type: 'varchar', length: 20 })
  outcome!: string;

  @TimestampColumn('received_at')
  receivedAt!: Date;
}

export const REFUND_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/** A book and how many copies a refund covers (CONTRACT §11). */
export interface RefundItem {
  bookId: string;
  quantity: number;
}

const jsonItems = { to: (items: RefundItem[]) => JSON.stringify(items), from: (text: string) => JSON.parse(text) as RefundItem[] };

/**
 * One refund of a payment and where it stands. A refund the provider refused for good is FAILED
 * with a code and a reason safe to show; an admin's retry makes it PENDING again. `refusals`
 * counts the refusals: each one needs a new idempotency key, as the provider replays a stored
 * refusal for a key it has seen.
 */
@Entity({ name: 'refunds' })
export class Refund {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'payment_id', type: 'varchar', length: 36 })
  paymentId!: string;

  @Column({ name: 'order_id', type: 'varchar', length: 36, nullable: true })
  orderId!: string | null;

  /** What asked for the refund, unique: `order-cancelled:<orderId>` for a cancel's refund. */
  @Column({ type: 'varchar', length: 80, nullable: true, unique: true })
  origin!: string | null;

  @Column({ name: 'amount', type: 'decimal', precision: 12, scale: 2, transformer: centsColumn })
  amountCents!: number;

  @Column({ type: 'varchar', length: 32 })
  reason!: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  note!: string | null;

  @Column({ type: 'text', transformer: jsonItems })
  items!: RefundItem[];

  @Column({ type: 'boolean' })
  restock!: boolean;

  @Column({ type: 'varchar', length: 16 })
  status!: RefundStatus;

  @Column({ type: 'int' })
  refusals!: number;

  @Column({ name: 'failure_code', type: 'varchar', length: 64, nullable: true })
  failureCode!: string | null;

  @Column({ name: 'failure_reason', type: 'varchar', length: 255, nullable: true })
  failureReason!: string | null;

  @Column({ name: 'provider_refund_id', type: 'varchar', length: 255, nullable: true })
  providerRefundId!: string | null;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('updated_at')
  updatedAt!: Date;
}
