/** The order service's tables: one order per successful payment, with its lines. */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { centsColumn } from '../../platform/money';

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

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}

@Entity({ name: 'order_items' })
export class OrderItem {
  @PrimaryColumn({ name: 'order_id', type: 'varchar', length: 36 })
  orderId!: string;

  @Column({ name: 'book_id', type: 'varchar', length: 36 })
  bookId!: string;

  @Column({ name: 'book_title', type: 'varchar', length: 255 })
  bookTitle!: string;

  @Column({ type: 'int' })
  quantity!: number;

  @Column({ name: 'unit_price', type: 'decimal', precision: 12, scale: 2, transformer: centsColumn })
  unitPriceCents!: number;

  @PrimaryColumn({ type: 'int' })
  position!: number;
}
