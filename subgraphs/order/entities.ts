/** The order service's tables: one order per successful payment, with its lines, and the payments refunded. */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { CartLineColumns } from '../../platform/cart-line';
import { centsColumn } from '../../platform/money';
import { TimestampColumn } from '../../platform/database';

export const ORDER_STATUSES = ['CONFIRMED', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'CANCELLED', 'REFUNDED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Where the order's refund stands, as the payment service reports it; null when none is involved. */
export const REFUND_STATUSES = ['PENDING', 'REFUNDED', 'FAILED'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

@Entity({ name: 'orders' })
export class Order {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'payment_id', type: 'varchar', length: 36, unique: true })
  paymentId!: string;

  @Column({ name: 'user_id', type: 'varchar', length: 36 })
  userId!: string;

  @Column({ name: 'total_amount', type: 'decimal', precision: 12, scale: 2, transformer: centsColumn })
  totalCents!: number;

  @Column({ type: 'varchar', length: 12 })
  status!: OrderStatus;

  @Column({ name: 'refund_status', type: 'varchar', length: 16, nullable: true })
  refundStatus!: RefundStatus | null;

  /** Set when the order was cancelled for a reason of ours (its copies were gone when it was paid); null otherwise. */
  @Column({ name: 'cancellation_reason', type: 'varchar', length: 500, nullable: true })
  cancellationReason!: string | null;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('updated_at')
  updatedAt!: Date;
}

@Entity({ name: 'order_items' })
export class OrderItem extends CartLineColumns {
  @PrimaryColumn({ name: 'order_id', type: 'varchar', length: 36 })
  orderId!: string;

  @PrimaryColumn({ type: 'int' })
  position!: number;
}

/**
 * A payment the payment service reported refunded. Kafka topics are not ordered with each other, so
 * its payment-success may come after the refund: this row makes that success create no order.
 */
@Entity({ name: 'order_refunded_payments' })
export class RefundedPayment {
  @PrimaryColumn({ name: 'payment_id', type: 'varchar', length: 36 })
  paymentId!: string;

  @TimestampColumn('refunded_at')
  refundedAt!: Date;
}
