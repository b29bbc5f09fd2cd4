/**
 * The catalogue's books: public reads (one book, a batch in request order, the filtered list),
 * the ADMIN writes and cover uploads. REST routes and GraphQL resolvers both call these functions.
 * A book points at one publisher, one category and its authors in order; those must exist when it
 * is written (checked in that order) and stay locked until the write commits.
 */
import { randomUUID } from 'node:crypto';
import { Brackets, In, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { Database } from '../../platform/database';
import { containsPattern, forUpdate, isUniqueViolation } from '../../platform/database';
import type { Logger } from '../../platform/logger';
import { assertRole, type Principal } from '../../platform/auth';
import { conflict, contractTimestamp, notFound } from '../../platform/errors';
import { centsOfJsonNumber, fromCents } from '../../platform/money';
import { COVER_EXTENSIONS, type CoverImage, type CoverStore } from './covers';
import type { BookResponseDto } from '../../platform/contracts/books';
import type { BookListQuery, BookRequestDto, BookSearchQuery } from './dto';
import { publishStockLowIfCrossed } from './events';
import { Author, Book, BookAuthor, Category, Publisher } from './entities';
import { normalizeIsbn, toIsbn13 } from './isbn';
import { isLanguageCode } from './languages';
import type { AuthorCatalogue, CategoryCatalogue, PublisherCatalogue } from './references';
import type { SearchIndex } from './search-index';
import type { Inventory } from './inventory';

/** The book service with the authors, categories and publishers it points at: what routes and resolvers are given. */
export interface Catalogue {
  books: BookService;
  authors: AuthorCatalogue;
  categories: CategoryCatalogue;
  publishers: PublisherCatalogue;
}

export interface BookPage {
  books: BookResponseDto[];
  /** Every match, whatever the page. */
  total: number;
}

/** A search result: the catalogue's book and its fields that matched, as HTML with the matches in `<mark>`. */
export type BookSearchHit = BookResponseDto & { highlights: Record<string, string> };

export interface BookSearchPage {
  books: BookSearchHit[];
  total: number;
}

const bookNotFound = (id: string) => notFound(`Book not found: ${id}`, 'BOOK_NOT_FOUND');
const duplicateIsbn = () => conflict('A book with this ISBN already exists.', 'DUPLICATE_ISBN');
/** Rows per `IN (...)` list, well under SQLite's and MySQL's placeholder limits. */
const CHUNK = 500;

type BookFields = Omit<Book, 'id' | 'createdAt' | 'updatedAt' | 'coverKey' | 'stock'> & { stock?: number | null };

/** The stored form of a validated request: ISBN without separators, text trimmed, price in cents. */
function bookFields(dto: BookRequestDto): BookFields {
  const isbn = normalizeIsbn(dto.isbn);
  const title = dto.title.trim();
  const priceCents = centsOfJsonNumber(dto.price);
  if (priceCents === undefined) throw new Error('price was not validated');
  const language = dto.language.trim();
  return {
    isbn,
    isbn13: toIsbn13(isbn),
    title,
    description: dto.description ?? null,
    priceCents,
    language: isLanguageCode(language) ? language.toLowerCase() : language,
    publishedDate: dto.publishedDate ? dto.publishedDate : null,
    publisherId: dto.publisherId.toLowerCase(),
    categoryId: dto.categoryId.toLowerCase(),
    ...(dto.stock === undefined ? {} : { stock: dto.stock }),
    searchText: title.toLowerCase(),
  };
}

async function chunked<T>(ids: readonly string[], load: (chunk: string[]) => Promise<T[]>): Promise<T[]> {
  const rows: T[] = [];
  for (let start = 0; start < ids.length; start += CHUNK) rows.push(...(await load(ids.slice(start, start + CHUNK))));
  return rows;
}

export class BookService {
  constructor(
    private readonly db: Database,
    private readonly covers: CoverStore,
    private readonly logger: Logger,
    private readonly search: SearchIndex,
    private readonly stockLowThreshold: number,
    private readonly inventory: Pick<Inventory, 'held' | 'checkStockChange'>,
  ) {}

  /** Books as answered: their author ids in order, the cover's URL, the copies held and available. */
  private async responses(books: Book[], manager: EntityManager = this.db.manager): Promise<BookResponseDto[]> {
    const tracked = books.filter((book) => book.stock !== null).map((book) => book.id);
    const links = await chunked(
      books.map((book) => book.id),
      (ids) => manager.find(BookAuthor, { where: { bookId: In(ids) }, order: { position: 'ASC' } }),
    );
    const held = await this.inventory.held(manager, tracked.length > 500 ? 'all' : tracked);
    const authorIds = new Map<string, string[]>();
    for (const link of links) authorIds.set(link.bookId, [...(authorIds.get(link.bookId) ?? []), link.authorId]);
    return books.map((book) => ({
      id: book.id,
      isbn: book.isbn,
      title: book.title,
      description: book.description,
      price: fromCents(book.priceCents),
      language: book.language,
      publishedDate: book.publishedDate,
      coverImageUrl: book.coverKey ? this.covers.url(book.id, book.coverKey) : null,
      publisherId: book.publisherId,
      categoryId: book.categoryId,
      authorIds: authorIds.get(book.id) ?? [],
      stock: book.stock,
      heldStock: book.stock === null ? null : (held.get(book.id) ?? 0),
      availableStock: book.stock === null ? null : Math.max(0, book.stock - (held.get(book.id) ?? 0)),
      createdAt: contractTimestamp(book.createdAt),
      updatedAt: contractTimestamp(book.updatedAt),
    }));
  }

  private async find(id: string, manager: EntityManager = this.db.manager): Promise<Book> {
    const book = await manager.findOne(Book, { where: { id: id.toLowerCase() } });
    if (!book) throw bookNotFound(id);
    return book;
  }

  async getBook(id: string): Promise<BookResponseDto> {
    const [response] = await this.responses([await this.find(id)]);
    return response;
  }

  /** The known books among `ids`, in the order asked, each once; unknown ids are left out. */
  async getBooks(ids: readonly string[]): Promise<BookResponseDto[]> {
    const wanted = [...new Set(ids.map((id) => id.toLowerCase()))];
    const rows = await chunked(wanted, (chunk) => this.db.manager.find(Book, { where: { id: In(chunk) } }));
    const byId = new Map((await this.responses(rows)).map((book) => [book.id, book]));
    return wanted.flatMap((id) => byId.get(id) ?? []);
  }

  /** Books by title, then id, with every filter applied; all of them unless a limit is given. */
  async listBooks(query: BookListQuery): Promise<BookPage> {
    const builder = this.filtered(query);
    const total = await builder.clone().getCount();
    builder.orderBy('b.title', 'ASC').addOrderBy('b.id', 'ASC');
    // MySQL knows no OFFSET without LIMIT: an offset alone reads to the end.
    if (query.limit !== undefined || query.offset > 0) builder.limit(query.limit ?? Number.MAX_SAFE_INTEGER);
    if (query.offset > 0) builder.offset(query.offset);
    return { books: await this.responses(await builder.getMany()), total };
  }

  private filtered(query: BookListQuery): SelectQueryBuilder<Book> {
    const builder = this.db.manager.createQueryBuilder(Book, 'b').where('1 = 1');
    if (query.categoryId) builder.andWhere('b.category_id = :categoryId', { categoryId: query.categoryId });
    if (query.publisherId) builder.andWhere('b.publisher_id = :publisherId', { publisherId: query.publisherId });
    if (query.authorId) {
      builder.andWhere('EXISTS (SELECT 1 FROM book_authors fa WHERE fa.book_id = b.id AND fa.author_id = :authorId)', { authorId: query.authorId });
    }
    const q = query.q?.trim();
    if (q) {
      builder.andWhere(
        new Brackets((where) => {
          const pattern = containsPattern(q.toLowerCase());
          where.where("b.search_text LIKE :pattern ESCAPE '!'", { pattern });
          where.orWhere("EXISTS (SELECT 1 FROM book_authors qa JOIN authors a ON a.id = qa.author_id WHERE qa.book_id = b.id AND a.name_key LIKE :pattern ESCAPE '!')");
          // "978-0-14" finds 9780141439518; an ISBN-10 book is found by its ISBN-13 digits too.
          const isbnFragment = normalizeIsbn(q);
          if (/^[0-9X]+$/.test(isbnFragment)) {
            where.orWhere('b.isbn LIKE :isbnPattern OR b.isbn13 LIKE :isbnPattern', { isbnPattern: `%${isbnFragment}%` });
          }
        }),
      );
    }
    return builder;
  }

  /** The full-text search (search-index.ts): books best match first, each with its highlights. */
  async searchBooks(query: BookSearchQuery): Promise<BookSearchPage> {
    const page = await this.search.find(query.q, query.limit, query.offset);
    const [books, highlights] = await Promise.all([this.getBooks(page.ids), this.search.highlights(page.ids, page.query)]);
    return { books: books.map((book) => ({ ...book, highlights: highlights.get(book.id) ?? {} })), total: page.total };
  }

  /** Category, publisher and authors must exist (404 naming the first missing kind); locked until the write commits. */
  private async checkReferences(manager: EntityManager, dto: BookRequestDto): Promise<string[]> {
    const shared = forUpdate(this.db);
    if (!(await manager.findOne(Category, { where: { id: dto.categoryId.toLowerCase() }, ...shared }))) throw notFound('Category not found', 'CATEGORY_NOT_FOUND');
    if (!(await manager.findOne(Publisher, { where: { id: dto.publisherId.toLowerCase() }, ...shared }))) throw notFound('Publisher not found', 'PUBLISHER_NOT_FOUND');
    const authorIds = dto.authorIds.map((id) => id.toLowerCase());
    const found = await manager.find(Author, { where: { id: In(authorIds) }, ...shared });
    if (found.length !== authorIds.length) throw notFound('One or more authors not found', 'AUTHOR_NOT_FOUND');
    return authorIds;
  }

  private async writeAuthors(manager: EntityManager, bookId: string, authorIds: string[]): Promise<void> {
    await manager.delete(BookAuthor, { bookId });
    await manager.insert(
      BookAuthor,
      authorIds.map((authorId, position) => ({ bookId, authorId, position })),
    );
  }

  private async guardIsbn<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicateIsbn();
      throw error;
    }
  }

  /** A book created without `stock` is not tracked: it can always be bought. */
  async createBook(principal: Principal, dto: BookRequestDto): Promise<BookResponseDto> {
    assertRole(principal, 'ADMIN');
    return this.guardIsbn(() => this.db.transaction((manager) => this.insertBook(manager, dto)));
  }

  private async insertBook(manager: EntityManager, dto: BookRequestDto): Promise<BookResponseDto> {
    const authorIds = await this.checkReferences(manager, dto);
    const { stock, ...fields } = bookFields(dto);
    if (await manager.findOne(Book, { where: { isbn13: fields.isbn13 } })) throw duplicateIsbn();
    const now = new Date();
    const book = Object.assign(new Book(), { id: randomUUID(), ...fields, stock: stock ?? null, coverKey: null, createdAt: now, updatedAt: now });
    await manager.insert(Book, book);
    await this.writeAuthors(manager, book.id, authorIds);
    await this.search.refresh(manager, [book.id]);
    const [response] = await this.responses([book], manager);
    return response;
  }

  /** A full update: every field is written, the ISBN may change unless another book has it; absent `stock` keeps it. */
  async updateBook(principal: Principal, id: string, dto: BookRequestDto): Promise<BookResponseDto> {
    assertRole(principal, 'ADMIN');
    return this.guardIsbn(() =>
      this.db.transaction(async (manager) => {
        const current = await this.find(id, manager);
        const authorIds = await this.checkReferences(manager, dto);
        const fields = bookFields(dto);
        const holder = await manager.findOne(Book, { where: { isbn13: fields.isbn13 } });
        if (holder && holder.id !== current.id) throw duplicateIsbn();
        if (fields.stock !== undefined) await this.inventory.checkStockChange(manager, current, fields.stock);
        const changes = { ...fields, updatedAt: new Date() };
        await manager.update(Book, { id: current.id }, changes);
        await this.writeAuthors(manager, current.id, authorIds);
        await this.search.refresh(manager, [current.id]);
        if (changes.stock !== undefined) await publishStockLowIfCrossed(manager, { id: current.id, title: changes.title }, current.stock, changes.stock, this.stockLowThreshold);
        const [response] = await this.responses([Object.assign(current, changes)], manager);
        return response;
      }),
    );
  }

  async deleteBook(principal: Principal, id: string): Promise<void> {
    assertRole(principal, 'ADMIN');
    const coverKey = await this.db.transaction(async (manager) => {
      const book = await this.find(id, manager);
      await manager.delete(BookAuthor, { bookId: book.id });
      await manager.delete(Book, { id: book.id });
      await this.search.remove(manager, book.id);
      return book.coverKey;
    });
    if (coverKey) await this.removeCover(coverKey);
  }

  /**
   * Stores a new cover under a new key, points the book at it, then deletes the old object. A book
   * deleted meanwhile leaves its new object behind for removal here, never a dangling URL.
   */
  async uploadCover(principal: Principal, id: string, image: CoverImage): Promise<BookResponseDto> {
    assertRole(principal, 'ADMIN');
    const book = await this.find(id);
    const key = `covers/${book.id}/${randomUUID()}.${COVER_EXTENSIONS[image.contentType]}`;
    await this.covers.put(key, image);
    let previous: string | null;
    try {
      previous = await this.db.transaction(async (manager) => {
        const current = await this.find(book.id, manager);
        await manager.update(Book, { id: book.id }, { coverKey: key, updatedAt: new Date() });
        return current.coverKey;
      });
    } catch (error) {
      await this.removeCover(key);
      throw error;
    }
    if (previous) await this.removeCover(previous);
    return this.getBook(book.id);
  }

  /** The cover's bytes, for a store this service serves; 404 when the book has none. */
  async readCover(id: string): Promise<CoverImage> {
    const book = await this.find(id);
    const image = book.coverKey && this.covers.read ? await this.covers.read(book.coverKey) : undefined;
    if (!image) throw notFound(`Cover not found for book: ${id}`, 'COVER_NOT_FOUND');
    return image;
  }

  /** An object that could not be deleted is only wasted space: logged, never a failed request. */
  private async removeCover(key: string): Promise<void> {
    try {
      await this.covers.remove(key);
    } catch (error) {
      this.logger.warn({ err: error, key }, 'old cover could not be deleted');
    }
  }

  /**
   * Inserts `books` only when the catalogue is empty, all or none; answers how many it inserted.
   * Two instances seeding at once collide on the ISBN: the loser inserts nothing.
   */
  async seedIfEmpty(seed: (manager: EntityManager, insert: (manager: EntityManager, dto: BookRequestDto) => Promise<BookResponseDto>) => Promise<number>): Promise<number> {
    try {
      return await this.db.transaction(async (manager) => ((await manager.count(Book)) > 0 ? 0 : seed(manager, (m, dto) => this.insertBook(m, dto))));
    } catch (error) {
      if (isUniqueViolation(error)) return 0;
      throw error;
    }
  }
}
