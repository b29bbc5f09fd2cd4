/**
 * The book service's book as other services read it: the payment service prices a checkout from
 * `POST /api/books/batch` (CONTRACT §4, §5).
 */
export interface BookResponseDto {
  id: string;
  isbn: string;
  title: string;
  description: string | null;
  price: number;
  language: string;
  publishedDate: string | null;
  coverImageUrl: string | null;
  publisherId: string | null;
  categoryId: string | null;
  authorIds: string[];
  stock: number | null;
  /** Copies held by checkouts not yet paid (CONTRACT §4); null when the stock is not tracked. */
  heldStock: number | null;
  /** Copies a new checkout may have: stock less held; null when the stock is not tracked. */
  availableStock: number | null;
  createdAt: string;
  updatedAt: string;
}
