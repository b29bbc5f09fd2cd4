/**
 * The book service's tables: books (price in cents in code, DECIMAL(10,2) in the database), their
 * authors in the order given, categories, publishers, and the stock each order took.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../../platform/database';
import { centsColumn } from '../../platform/money';

@Entity({ name: 'books' })
export class Book {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  /** As the client gave it (ISBN-10 or ISBN-13), without hyphens or spaces. */
  @Column({ type: 'varchar', length: 13 })
  isbn!: string;

  /** The ISBN-13 form of `isbn`: an ISBN-10 and its ISBN-13 are the same book, so uniqueness is decided here. */
  @Column({ type: 'varchar', length: 13, unique: true })
  isbn13!: string;

  @Column({ type: 'varchar', length: 255 })
  title!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ name: 'price', type: 'decimal', precision: 10, scale: 2, transformer: centsColumn })
  priceCents!: number;

  @Column({ type: 'varchar', length: 50 })
  language!: string;

  @Column({ name: 'published_date', type: 'varchar', length: 10, nullable: true })
  publishedDate!: string | null;

  /** The object key of the cover in the cover store; null until one is uploaded. */
  @Column({ name: 'cover_key', type: 'varchar', length: 200, nullable: true })
  coverKey!: string | null;

  /** Null only for books written before categories existed. */
  @Column({ name: 'publisher_id', type: 'varchar', length: 36, nullable: true })
  publisherId!: string | null;

  @Column({ name: 'category_id', type: 'varchar', length: 36, nullable: true })
  categoryId!: string | null;

  /** Null: inventory not tracked (the book can always be bought); otherwise copies in stock, never below 0. */
  @Column({ type: 'int', nullable: true })
  stock!: number | null;

  /** The title lower-cased in JavaScript (SQLite's LOWER knows only ASCII), for the search. */
  @Column({ name: 'search_text', type: 'text' })
  searchText!: string;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('updated_at')
  updatedAt!: Date;
}

@Entity({ name: 'book_authors' })
export class BookAuthor {
  @PrimaryColumn({ name: 'book_id', type: 'varchar', length: 36 })
  bookId!: string;

  @PrimaryColumn({ name: 'author_id', type: 'varchar', length: 36 })
  authorId!: string;

  /** The author's place in the book's `authorIds`, from 0. */
  @Column({ type: 'int' })
  position!: number;
}

@Entity({ name: 'authors' })
export class Author {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'first_name', type: 'varchar', length: 100 })
  firstName!: string;

  @Column({ name: 'last_name', type: 'varchar', length: 100, nullable: true })
  lastName!: string | null;

  @Column({ type: 'text', nullable: true })
  biography!: string | null;

  @Column({ type: 'varchar', length: 100, nullable: true })
  country!: string | null;

  /** "first last" lower-cased: unique, and what the search matches an author's name against. */
  @Column({ name: 'name_key', type: 'varchar', length: 201, unique: true })
  nameKey!: string;
}

@Entity({ name: 'categories' })
export class Category {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ name: 'name_key', type: 'varchar', length: 100, unique: true })
  nameKey!: string;
}

@Entity({ name: 'publishers' })
export class Publisher {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'varchar', length: 150 })
  name!: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  address!: string | null;

  @Column({ name: 'name_key', type: 'varchar', length: 150, unique: true })
  nameKey!: string;
}

/** What one order took off one book's stock, so a redelivered or cancelled order moves stock once. */
@Entity({ name: 'order_stock' })
export class OrderStock {
  @PrimaryColumn({ name: 'order_id', type: 'varchar', length: 36 })
  orderId!: string;

  @PrimaryColumn({ name: 'book_id', type: 'varchar', length: 36 })
  bookId!: string;

  /** Copies actually taken (less than ordered when the order oversold the book). */
  @Column({ type: 'int' })
  taken!: number;

  @Column({ type: 'boolean' })
  returned!: boolean;
}

export const STOCK_LINE_STATUSES = ['HELD', 'RELEASED', 'TAKEN', 'SHORT'] as const;
export type StockLineStatus = (typeof STOCK_LINE_STATUSES)[number];

/**
 * A payment's claim on one book's copies (inventory.ts): HELD from its checkout until its hold is
 * released (RELEASED) or its paid order takes the copies (TAKEN), or finds them gone (SHORT).
 */
@Entity({ name: 'stock_holds' })
export class StockHold {
  @PrimaryColumn({ name: 'payment_id', type: 'varchar', length: 36 })
  paymentId!: string;

  @PrimaryColumn({ name: 'book_id', type: 'varchar', length: 36 })
  bookId!: string;

  /** The checkout's hold this line belongs to: a payment held again after expiry gets a new one. */
  @Column({ name: 'hold_id', type: 'varchar', length: 36, nullable: true })
  holdId!: string | null;

  @Column({ name: 'user_id', type: 'varchar', length: 36 })
  userId!: string;

  @Column({ type: 'varchar', length: 10 })
  status!: StockLineStatus;

  /** Copies the line holds (HELD), or asked for. */
  @Column({ type: 'int' })
  quantity!: number;

  @TimestampColumn('expires_at')
  expiresAt!: Date;

  /** Copies off the stock for this payment (TAKEN), less those put back by restocking refunds. */
  @Column({ type: 'int' })
  taken!: number;

  /** Copies refunded with restock before the order took any: the take leaves them on the shelf. */
  @Column({ type: 'int' })
  credited!: number;

  /** The cancel of the payment's order put its copies back. */
  @Column({ type: 'boolean' })
  returned!: boolean;

  /** What was left for this payment when its order found too few copies (SHORT). */
  @Column({ name: 'left_at_commit', type: 'int', nullable: true })
  leftAtCommit!: number | null;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('updated_at')
  updatedAt!: Date;
}
