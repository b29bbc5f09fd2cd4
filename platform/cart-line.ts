/** The columns of a cart line as the payment and order tables both keep it: the book as sold, how many, at what unit price. */
import { Column } from 'typeorm';
import { centsColumn } from './money';

/** Not an entity: `payment_items` and `order_items` extend it with their own keys. */
export abstract class CartLineColumns {
  @Column({ name: 'book_id', type: 'varchar', length: 36 })
  bookId!: string;

  @Column({ name: 'book_title', type: 'varchar', length: 255 })
  bookTitle!: string;

  @Column({ type: 'int' })
  quantity!: number;

  @Column({ name: 'unit_price', type: 'decimal', precision: 12, scale: 2, transformer: centsColumn })
  unitPriceCents!: number;
}
