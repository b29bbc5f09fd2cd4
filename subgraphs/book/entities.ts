/** The book service's table: one row per book, its price in cents in code and DECIMAL(10,2) in the database. */
import { Column, Entity, PrimaryColumn, type ValueTransformer } from 'typeorm';
import { centsColumn } from '../../platform/money';

const jsonStrings: ValueTransformer = {
  to: (values: string[]) => JSON.stringify(values),
  from: (text: string) => JSON.parse(text) as string[],
};

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

  /** A JSON array of names, in the order given. */
  @Column({ type: 'text', transformer: jsonStrings })
  authors!: string[];

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ name: 'price', type: 'decimal', precision: 10, scale: 2, transformer: centsColumn })
  priceCents!: number;

  @Column({ type: 'varchar', length: 2 })
  language!: string;

  @Column({ name: 'published_date', type: 'varchar', length: 10 })
  publishedDate!: string;

  @Column({ type: 'int' })
  stock!: number;

  /**
   * Title and authors lower-cased in JavaScript (SQLite's LOWER knows only ASCII), one per line:
   * the search never matches across two of them, as a search query holds no line break.
   */
  @Column({ name: 'search_text', type: 'text' })
  searchText!: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
