/** Books the benchmarks write straight into the book service's tables: the HTTP path is not what they measure. */
import { randomUUID } from 'node:crypto';
import type { Database } from '../platform/database';
import { nextIsbn13 } from '../test/commerce';
import { Book, BookAuthor } from '../subgraphs/book/entities';

/** A tracked book of the benchmark catalogue with a fresh ISBN. */
export function benchBook(fields: Pick<Book, 'title' | 'description' | 'publisherId' | 'categoryId'>, now: Date): Book {
  const isbn = nextIsbn13();
  return Object.assign(new Book(), {
    id: randomUUID(),
    isbn,
    isbn13: isbn,
    ...fields,
    priceCents: 1299,
    language: 'en',
    publishedDate: '2001-01-01',
    coverKey: null,
    stock: 10,
    searchText: fields.title.toLowerCase(),
    createdAt: now,
    updatedAt: now,
  });
}

/** Inserts `books`, each with the one author `authorOf` names, in one transaction. */
export async function insertBooks(db: Database, books: Book[], authorOf: (book: Book) => string): Promise<void> {
  await db.transaction(async (manager) => {
    await manager.insert(Book, books);
    await manager.insert(
      BookAuthor,
      books.map((book) => ({ bookId: book.id, authorId: authorOf(book), position: 0 })),
    );
  });
}
