/**
 * The catalogue: public reads (one book, a batch in request order, search with paging) and the
 * ADMIN writes. REST routes and GraphQL resolvers both call these functions.
 */
import { randomUUID } from 'node:crypto';
import { In } from 'typeorm';
import type { Database } from '../../platform/database';
import { containsPattern, isUniqueViolation } from '../../platform/database';
import { assertRole, type Principal } from '../../rest-compat/auth';
import { conflict, contractTimestamp, notFound } from '../../rest-compat/errors';
import type { BookRequestDto, BookResponseDto } from './dto';
import { Book } from './entities';
import { normalizeIsbn, toIsbn13 } from './isbn';
import { centsOfJsonNumber, fromCents } from '../../platform/money';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export interface BookListQuery {
  /** Case-insensitive substring of the title, an author or the ISBN; blank means every book. */
  q?: string;
  limit: number;
  offset: number;
}

export function toBookResponse(book: Book): BookResponseDto {
  return {
    id: book.id,
    isbn: book.isbn,
    title: book.title,
    authors: [...book.authors],
    description: book.description,
    price: fromCents(book.priceCents),
    language: book.language,
    publishedDate: book.publishedDate,
    stock: book.stock,
    createdAt: contractTimestamp(book.createdAt),
    updatedAt: contractTimestamp(book.updatedAt),
  };
}

const bookNotFound = (id: string) => notFound(`Book not found: ${id}`, 'BOOK_NOT_FOUND');
const duplicateIsbn = (isbn: string) => conflict(`A book with ISBN ${isbn} already exists`, 'DUPLICATE_ISBN');

type BookFields = Omit<Book, 'id' | 'createdAt' | 'updatedAt'>;

/** The stored form of a validated request: ISBN without separators, names trimmed, price in cents. */
export function bookFields(dto: BookRequestDto): BookFields {
  const isbn = normalizeIsbn(dto.isbn);
  const title = dto.title.trim();
  const authors = dto.authors.map((author) => author.trim());
  const priceCents = centsOfJsonNumber(dto.price);
  if (priceCents === undefined) throw new Error('price was not validated');
  return {
    isbn,
    isbn13: toIsbn13(isbn),
    title,
    authors,
    description: dto.description ?? null,
    priceCents,
    language: dto.language.toLowerCase(),
    publishedDate: dto.publishedDate,
    stock: dto.stock,
    searchText: [title, ...authors].join('\n').toLowerCase(),
  };
}

export class BookService {
  constructor(private readonly db: Database) {}

  async getBook(id: string): Promise<BookResponseDto> {
    const book = await this.db.manager.findOne(Book, { where: { id: id.toLowerCase() } });
    if (!book) throw bookNotFound(id);
    return toBookResponse(book);
  }

  /** The known books among `ids`, in the order asked, each once; unknown ids are left out. */
  async getBooks(ids: readonly string[]): Promise<BookResponseDto[]> {
    const wanted = [...new Set(ids.map((id) => id.toLowerCase()))];
    if (wanted.length === 0) return [];
    const rows = await this.db.manager.find(Book, { where: { id: In(wanted) } });
    const byId = new Map(rows.map((book) => [book.id, book]));
    return wanted.flatMap((id) => {
      const book = byId.get(id);
      return book ? [toBookResponse(book)] : [];
    });
  }

  async listBooks(query: BookListQuery): Promise<BookResponseDto[]> {
    const builder = this.db.manager.createQueryBuilder(Book, 'b');
    const q = query.q?.trim();
    if (q) {
      const conditions = ["b.search_text LIKE :pattern ESCAPE '!'"];
      const parameters: Record<string, string> = { pattern: containsPattern(q.toLowerCase()) };
      // "978-0-14" finds 9780141439518; an ISBN-10 book is found by its ISBN-13 digits too.
      const isbnFragment = normalizeIsbn(q);
      if (/^[0-9X]+$/.test(isbnFragment)) {
        conditions.push('b.isbn LIKE :isbnPattern', 'b.isbn13 LIKE :isbnPattern');
        parameters.isbnPattern = `%${isbnFragment}%`;
      }
      builder.where(`(${conditions.join(' OR ')})`, parameters);
    }
    const rows = await builder.orderBy('b.title', 'ASC').addOrderBy('b.id', 'ASC').limit(query.limit).offset(query.offset).getMany();
    return rows.map(toBookResponse);
  }

  async createBook(principal: Principal, dto: BookRequestDto): Promise<BookResponseDto> {
    assertRole(principal, 'ADMIN');
    const fields = bookFields(dto);
    const now = new Date();
    const book = Object.assign(new Book(), { id: randomUUID(), ...fields, createdAt: now, updatedAt: now });
    try {
      await this.db.transaction((manager) => manager.insert(Book, book));
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicateIsbn(fields.isbn);
      throw error;
    }
    return toBookResponse(book);
  }

  /** A full update: every field is replaced; the ISBN may change unless another book has it. */
  async updateBook(principal: Principal, id: string, dto: BookRequestDto): Promise<BookResponseDto> {
    assertRole(principal, 'ADMIN');
    const fields = bookFields(dto);
    try {
      const book = await this.db.transaction(async (manager) => {
        const current = await manager.findOne(Book, { where: { id } });
        if (!current) throw bookNotFound(id);
        const holder = await manager.findOne(Book, { where: { isbn13: fields.isbn13 } });
        if (holder && holder.id !== id) throw duplicateIsbn(fields.isbn);
        const changes = { ...fields, updatedAt: new Date() };
        await manager.update(Book, { id }, changes);
        return Object.assign(current, changes);
      });
      return toBookResponse(book);
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicateIsbn(fields.isbn);
      throw error;
    }
  }

  async deleteBook(principal: Principal, id: string): Promise<void> {
    assertRole(principal, 'ADMIN');
    const result = await this.db.transaction((manager) => manager.delete(Book, { id }));
    if (!result.affected) throw bookNotFound(id);
  }

  /**
   * Inserts `books` only when the catalogue is empty, all or none; answers how many it inserted.
   * Two instances seeding at once collide on the ISBN: the loser inserts nothing.
   */
  async seedIfEmpty(books: readonly BookRequestDto[]): Promise<number> {
    try {
      return await this.db.transaction(async (manager) => {
        if ((await manager.count(Book)) > 0) return 0;
        const now = new Date();
        for (const dto of books) {
          await manager.insert(Book, Object.assign(new Book(), { id: randomUUID(), ...bookFields(dto), createdAt: now, updatedAt: now }));
        }
        return books.length;
      });
    } catch (error) {
      if (isUniqueViolation(error)) return 0;
      throw error;
    }
  }
}
