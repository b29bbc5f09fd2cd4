/**
 * The catalogue's full-text index, on the database's own engine: SQLite FTS5 ranked by bm25, or
 * MariaDB/MySQL InnoDB FULLTEXT in boolean mode (migration 1732000000302 builds either).
 *
 * Each book has one search document in `book_search`: its title, author names, description, and
 * category, publisher and ISBNs ("extra"), as the folded words of search-text.ts. The document is
 * rewritten in the transaction of every write that changes its text (a book created, updated or
 * deleted; an author, category or publisher renamed), so a search never sees a half-written book.
 * `book_search_terms` is the vocabulary the typo rule corrects against (see `find`).
 *
 * Relevance weights a match by where it is: title 10, authors 4, extra 2, description 1.
 */
import type { EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import { editsOf, highlight, INNODB_MIN_TOKEN_SIZE, innodbWord, queryWords, TYPO_MIN_LENGTH, words, type QueryWord } from './search-text';

/** Ids per statement, well under SQLite's and MySQL's placeholder limits with five values a row. */
const CHUNK = 200;
/** Shorter words are never corrected (the typo rule starts at five letters, less one inserted). */
const TERM_MIN_LENGTH = TYPO_MIN_LENGTH - 1;

/** What a book's document and highlights are made of. */
interface BookText {
  id: string;
  title: string;
  description: string | null;
  isbn: string;
  isbn13: string;
  authors: string[];
  category: string | null;
  publisher: string | null;
}

export interface SearchPage {
  /** Book ids, best match first. */
  ids: string[];
  total: number;
  /** The words searched for, with the corrections the typo rule added. */
  query: QueryWord[];
}

/** The engine-specific half: one ranked, paged query over the documents, and the text of a document's column. */
interface Engine {
  find(manager: EntityManager, query: QueryWord[], limit: number, offset: number): Promise<{ ids: string[]; total: number }>;
  column: (words: string[]) => string;
}

const placeholders = (count: number, one = '?') => Array.from({ length: count }, () => one).join(', ');

/** FTS5: `("hobb"* OR "hobbit") AND ("tolkien"*)`; bm25 is lower for better matches. */
const fts5: Engine = {
  async find(manager, query, limit, offset) {
    const match = query.map((word) => `(${[`"${word.prefix}"*`, ...word.corrections.map((c) => `"${c}"`)].join(' OR ')})`).join(' AND ');
    const [{ total }] = await manager.query<{ total: number }[]>('SELECT COUNT(*) AS total FROM book_search_fts WHERE book_search_fts MATCH ?', [match]);
    if (total === 0 || offset >= total) return { ids: [], total: Number(total) };
    const rows = await manager.query<{ bookId: string }[]>(
      `SELECT s.book_id AS bookId FROM book_search_fts JOIN book_search s ON s.id = book_search_fts.rowid
       WHERE book_search_fts MATCH ? ORDER BY bm25(book_search_fts, 10.0, 4.0, 1.0, 2.0), s.book_id LIMIT ? OFFSET ?`,
      [match, limit, offset],
    );
    return { ids: rows.map((row) => row.bookId), total: Number(total) };
  },
  column: (words) => words.join(' '),
};

/**
 * InnoDB boolean mode: `+(hobb* hobbit) +(tolkien*)` filters on the index over every column; each
 * column's own index scores the words without `+`, so a book matching one word in its title and the
 * other in its authors still earns its title score.
 */
const innodb: Engine = {
  async find(manager, query, limit, offset) {
    const required = query.map((word) => `+(${[`${word.prefix}*`, ...word.corrections].join(' ')})`).join(' ');
    const any = query.flatMap((word) => [`${word.prefix}*`, ...word.corrections]).join(' ');
    const all = 'MATCH(title, authors, description, extra) AGAINST (? IN BOOLEAN MODE)';
    const [{ total }] = await manager.query<{ total: number | string }[]>(`SELECT COUNT(*) AS total FROM book_search WHERE ${all}`, [required]);
    if (Number(total) === 0 || offset >= Number(total)) return { ids: [], total: Number(total) };
    const score = (column: string, weight: number) => `${weight} * MATCH(${column}) AGAINST (? IN BOOLEAN MODE)`;
    const rows = await manager.query<{ bookId: string }[]>(
      `SELECT book_id AS bookId FROM book_search WHERE ${all}
       ORDER BY ${score('title', 10)} + ${score('authors', 4)} + ${score('extra', 2)} + ${score('description', 1)} DESC, book_id LIMIT ? OFFSET ?`,
      [required, any, any, any, any, limit, offset],
    );
    return { ids: rows.map((row) => row.bookId), total: Number(total) };
  },
  // Short words padded, so that InnoDB indexes them (search-text.ts INNODB_MIN_TOKEN_SIZE).
  column: (words) => words.map(innodbWord).join(' '),
};

export class SearchIndex {
  private readonly engine: Engine;

  constructor(private readonly db: Database) {
    this.engine = db.kind === 'mysql' ? innodb : fts5;
  }

  /**
   * The books matching every word of `q` (in any order, each as a prefix), best first. When that
   * finds nothing, the typo rule: each word of five letters or more is looked up, by every string
   * at edit distance 1 from it (search-text.ts `editsOf`), in the vocabulary of indexed words; the
   * query is run again with each such word matching its prefix or any of the words found.
   */
  async find(q: string, limit: number, offset: number): Promise<SearchPage> {
    let query = queryWords(q);
    if (query.length === 0) return { ids: [], total: 0, query };
    let page = await this.engine.find(this.db.manager, query, limit, offset);
    if (page.total === 0) {
      const corrected = await this.corrected(query);
      if (corrected) {
        query = corrected;
        page = await this.engine.find(this.db.manager, query, limit, offset);
      }
    }
    return { ...page, query };
  }

  /** `query` with the vocabulary's words one edit away from each long word, or undefined when there are none. */
  private async corrected(query: QueryWord[]): Promise<QueryWord[] | undefined> {
    let found = false;
    const corrected: QueryWord[] = [];
    for (const word of query) {
      const corrections: string[] = [];
      if (word.prefix.length >= TYPO_MIN_LENGTH) {
        const edits = editsOf(word.prefix).filter((edit) => edit.length >= TERM_MIN_LENGTH);
        for (let start = 0; start < edits.length; start += 500) {
          const chunk = edits.slice(start, start + 500);
          const rows = await this.db.manager.query<{ term: string }[]>(`SELECT term FROM book_search_terms WHERE term IN (${placeholders(chunk.length)})`, chunk);
          corrections.push(...rows.map((row) => row.term));
        }
      }
      found ||= corrections.length > 0;
      corrected.push({ prefix: word.prefix, corrections: corrections.sort() });
    }
    return found ? corrected : undefined;
  }

  /** For each of `ids`, its fields with a match, as HTML fragments with the matches in `<mark>`. */
  async highlights(ids: string[], query: QueryWord[]): Promise<Map<string, Record<string, string>>> {
    const result = new Map<string, Record<string, string>>();
    for (const text of await this.texts(this.db.manager, ids)) {
      const fields: Record<string, string | undefined> = {
        title: highlight(text.title, query),
        authors: highlight(text.authors.join(', '), query),
        description: highlight(text.description, query),
        category: highlight(text.category, query),
        publisher: highlight(text.publisher, query),
        // Found by either form, the ISBN as the book shows it is marked whole.
        isbn: [text.isbn, text.isbn13].some((isbn) => highlight(isbn, query)) ? `<mark>${text.isbn}</mark>` : undefined,
      };
      result.set(text.id, Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined)));
    }
    return result;
  }

  /** Rewrites the documents of `bookIds` from the catalogue's rows, in the caller's transaction. */
  async refresh(manager: EntityManager, bookIds: readonly string[]): Promise<void> {
    const insertIgnore = this.db.kind === 'mysql' ? 'INSERT IGNORE INTO' : 'INSERT OR IGNORE INTO';
    for (let start = 0; start < bookIds.length; start += CHUNK) {
      const chunk = bookIds.slice(start, start + CHUNK);
      await manager.query(`DELETE FROM book_search WHERE book_id IN (${placeholders(chunk.length)})`, chunk);
      const column = this.engine.column;
      const documents = (await this.texts(manager, chunk)).map((text) => [
        text.id,
        column(words(text.title)),
        column(words(text.authors.join(' '))),
        column(words(text.description)),
        column([...words(text.category), ...words(text.publisher), text.isbn.toLowerCase(), text.isbn13]),
      ]);
      if (documents.length === 0) continue;
      await manager.query(`INSERT INTO book_search (book_id, title, authors, description, extra) VALUES ${placeholders(documents.length, '(?, ?, ?, ?, ?)')}`, documents.flat());
      // Sorted, so two writers lock shared terms in the same order. A word no book has any more is
      // kept: the typo rule then only re-runs a query that finds nothing.
      const terms = [...new Set(documents.flatMap((document) => document.slice(1).join(' ').split(' ')))].filter((term) => term.length >= TERM_MIN_LENGTH).sort();
      for (let at = 0; at < terms.length; at += 500) {
        const part = terms.slice(at, at + 500);
        await manager.query(`${insertIgnore} book_search_terms (term) VALUES ${placeholders(part.length, '(?)')}`, part);
      }
    }
  }

  /** Removes a deleted book's document, in the caller's transaction. */
  async remove(manager: EntityManager, bookId: string): Promise<void> {
    await manager.query('DELETE FROM book_search WHERE book_id = ?', [bookId]);
  }

  /**
   * On MariaDB/MySQL, refuses to go on when the server indexes no word under more letters than the
   * documents are padded to (search-text.ts INNODB_MIN_TOKEN_SIZE): three-letter words would not be
   * found there, where SQLite finds them. Run once at start.
   */
  async checkServer(): Promise<void> {
    if (this.db.kind !== 'mysql') return;
    const [{ size }] = await this.db.manager.query<{ size: number | string }[]>('SELECT @@GLOBAL.innodb_ft_min_token_size AS size');
    if (Number(size) > INNODB_MIN_TOKEN_SIZE) {
      throw new Error(
        `The database server's innodb_ft_min_token_size is ${size}: the book search needs it at ${INNODB_MIN_TOKEN_SIZE} or less (the default), or words of ${INNODB_MIN_TOKEN_SIZE} letters cannot be found. Set it in the server's configuration and restart it.`,
      );
    }
  }

  /**
   * Indexes the books that have no document yet (those the migration found): run once at start,
   * a few hundred books per transaction; answers how many.
   */
  async indexMissing(): Promise<number> {
    const rows = await this.db.manager.query<{ id: string }[]>('SELECT b.id AS id FROM books b LEFT JOIN book_search s ON s.book_id = b.id WHERE s.book_id IS NULL');
    const ids = rows.map((row) => row.id);
    for (let start = 0; start < ids.length; start += CHUNK) {
      const chunk = ids.slice(start, start + CHUNK);
      await this.db.transaction((manager) => this.refresh(manager, chunk));
    }
    return ids.length;
  }

  private async texts(manager: EntityManager, ids: readonly string[]): Promise<BookText[]> {
    if (ids.length === 0) return [];
    const list = placeholders(ids.length);
    const books = await manager.query<Omit<BookText, 'authors'>[]>(
      `SELECT b.id AS id, b.title AS title, b.description AS description, b.isbn AS isbn, b.isbn13 AS isbn13, c.name AS category, p.name AS publisher
       FROM books b LEFT JOIN categories c ON c.id = b.category_id LEFT JOIN publishers p ON p.id = b.publisher_id WHERE b.id IN (${list})`,
      [...ids],
    );
    const authors = await manager.query<{ bookId: string; firstName: string; lastName: string | null }[]>(
      `SELECT ba.book_id AS bookId, a.first_name AS firstName, a.last_name AS lastName FROM book_authors ba JOIN authors a ON a.id = ba.author_id
       WHERE ba.book_id IN (${list}) ORDER BY ba.book_id, ba.position`,
      [...ids],
    );
    const names = new Map<string, string[]>();
    for (const a of authors) names.set(a.bookId, [...(names.get(a.bookId) ?? []), [a.firstName, a.lastName].filter(Boolean).join(' ')]);
    return books.map((book) => ({ ...book, authors: names.get(book.id) ?? [] }));
  }
}
