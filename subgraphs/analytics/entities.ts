/**
 * The analytics service's tables: one fact row per payment (what is known of it, from any of its
 * events, in any order), and the aggregates kept current from those facts: per UTC day and per book.
 * Money is integer cents (BIGINT), so sums stay exact on SQLite and MySQL alike.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';

const bigint = { type: 'bigint' as const, transformer: { to: (v: number | null) => v, from: (v: string | number | null) => (v === null ? null : Number(v)) } };

@Entity({ name: 'analytics_payment_facts' })
export class PaymentFact {
  @PrimaryColumn({ name: 'payment_id', type: 'varchar', length: 36 })
  paymentId!: string;

  @Column({ name: 'amount_cents', ...bigint, nullable: true })
  amountCents!: number | null;

  /** JSON array of { bookId, bookTitle, quantity, priceCents }, once an event carrying items arrived. */
  @Column({ type: 'text', nullable: true })
  items!: string | null;

  @Column({ name: 'created_day', type: 'varchar', length: 10, nullable: true })
  createdDay!: string | null;

  @Column({ name: 'paid_day', type: 'varchar', length: 10, nullable: true })
  paidDay!: string | null;

  @Column({ name: 'failed_day', type: 'varchar', length: 10, nullable: true })
  failedDay!: string | null;

  @Column({ name: 'refunded_day', type: 'varchar', length: 10, nullable: true })
  refundedDay!: string | null;

  /** JSON array of { refundId, day, amountCents, items }, the payment's succeeded refunds (CONTRACT §11). */
  @Column({ type: 'text', nullable: true })
  refunds!: string | null;
}

@Entity({ name: 'analytics_daily' })
export class DailyAggregate {
  @PrimaryColumn({ type: 'varchar', length: 10 })
  day!: string;

  @Column({ name: 'orders_created', ...bigint })
  ordersCreated!: number;

  @Column({ name: 'paid_orders', ...bigint })
  paidOrders!: number;

  @Column({ name: 'failed_payments', ...bigint })
  failedPayments!: number;

  @Column({ name: 'revenue_cents', ...bigint })
  revenueCents!: number;

  @Column({ name: 'books_sold', ...bigint })
  booksSold!: number;

  @Column({ name: 'refunded_payments', ...bigint })
  refundedPayments!: number;

  @Column({ name: 'refunded_cents', ...bigint })
  refundedCents!: number;

  @Column({ ...bigint })
  refunds!: number;

  @Column({ name: 'refunds_cents', ...bigint })
  refundsCents!: number;
}

@Entity({ name: 'analytics_book_sales' })
export class BookSales {
  @PrimaryColumn({ name: 'book_id', type: 'varchar', length: 36 })
  bookId!: string;

  @Column({ name: 'book_title', type: 'varchar', length: 255 })
  bookTitle!: string;

  @Column({ name: 'quantity_sold', ...bigint })
  quantitySold!: number;

  @Column({ name: 'revenue_cents', ...bigint })
  revenueCents!: number;
}
