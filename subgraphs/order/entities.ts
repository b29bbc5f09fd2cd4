/** The order service's tables: one order per successful payment, with its lines. */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { CartLineColumns } from '../../platform/cart-line';
import { centsColumn } from '../../platform/money';
import { TimestampColumn } from '../../platform/database';

export const ORDER_STATUSES = ['CONFIRMED', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'CANCELLED', 'REFUNDED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

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
