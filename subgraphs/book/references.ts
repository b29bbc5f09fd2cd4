/**
 * Authors, categories and publishers (CONTRACT §4): public lists sorted by name and reads, ADMIN
 * writes. Names are unique per resource, compared without letter case. Deleting one that books
 * still point at is refused (409) and deletes nothing: the count and the delete run in one
 * transaction holding the row's lock, and a book write locks what it points at too,
 * so neither can slip between the other's check and write. A rename rewrites the search documents
 * of the books that point at the row, in the rename's transaction.
 */
import { randomUUID } from 'node:crypto';
import { In, type EntityManager, type EntityTarget, type FindOptionsOrder } from 'typeorm';
import type { Database } from '../../platform/database';
import { forUpdate, isUniqueViolation } from '../../platform/database';
import { assertRole, type Principal } from '../../platform/auth';
import { conflict, notFound } from '../../platform/errors';
import { storedKey } from '../../platform/validation';
import type { AuthorRequestDto, AuthorResponseDto, CategoryRequestDto, CategoryResponseDto, PublisherRequestDto, PublisherResponseDto } from './dto';
import { Author, Book, BookAuthor, Category, Publisher } from './entities';
import type { SearchIndex } from './search-index';

interface Named {
  id: string;
  nameKey: string;
}

interface ReferenceKind<E extends Named, Req, Res> {
  entity: EntityTarget<E>;
  /** "Author", "Category", "Publisher": the start of its messages. */
  label: string;
  order: FindOptionsOrder<E>;
  fields(dto: Req): Omit<E, 'id'>;
  response(row: E): Res;
  /** Where books point at a row: the table, its column holding the row's id, and the one holding the book's. */
  links: BookLinks;
}

type BookLinks = { entity: typeof Book; column: 'categoryId' | 'publisherId'; book: 'id' } | { entity: typeof BookAuthor; column: 'authorId'; book: 'bookId' };

const trimmed = (value: string | null | undefined) => (value === undefined || value === null || value.trim() === '' ? null : value.trim());

/** What the routes and resolvers use of any of the three. */
export interface ReferenceApi<Req, Res> {
  list(): Promise<Res[]>;
  get(id: string): Promise<Res>;
  create(principal: Principal, dto: Req): Promise<Res>;
  update(principal: Principal, id: string, dto: Req): Promise<Res>;
  remove(principal: Principal, id: string): Promise<void>;
}

export class ReferenceCatalogue<E extends Named, Req, Res> implements ReferenceApi<Req, Res> {
  constructor(
    private readonly db: Database,
    private readonly search: SearchIndex,
    private readonly kind: ReferenceKind<E, Req, Res>,
  ) {}

  private missing(id: string) {
    return notFound(`${this.kind.label} not found: ${id}`, `${this.kind.label.toUpperCase()}_NOT_FOUND`);
  }

  private duplicate() {
    return conflict(`A ${this.kind.label.toLowerCase()} with this name already exists.`, `DUPLICATE_${this.kind.label.toUpperCase()}`);
  }

  async list(): Promise<Res[]> {
    const rows = await this.db.manager.find(this.kind.entity, { order: this.kind.order });
    return rows.map((row) => this.kind.response(row));
  }

  async get(id: string): Promise<Res> {
    const row = await this.db.manager.findOne(this.kind.entity, { where: { id } as never });
    if (!row) throw this.missing(id);
    return this.kind.response(row);
  }

  /** The known rows among `ids`, by id. */
  async byIds(ids: readonly string[]): Promise<Map<string, Res>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.manager.find(this.kind.entity, { where: { id: In([...ids]) } as never });
    return new Map(rows.map((row) => [row.id, this.kind.response(row)]));
  }

  async create(principal: Principal, dto: Req): Promise<Res> {
    assertRole(principal, 'ADMIN');
    const fields = this.kind.fields(dto);
    const row = { id: randomUUID(), ...fields } as E;
    await this.guardUnique(() => this.db.transaction((manager) => manager.insert(this.kind.entity, row as never)));
    return this.kind.response(row);
  }

  async update(principal: Principal, id: string, dto: Req): Promise<Res> {
    assertRole(principal, 'ADMIN');
    const fields = this.kind.fields(dto);
    return this.guardUnique(() =>
      this.db.transaction(async (manager) => {
        const current = await manager.findOne(this.kind.entity, { where: { id } as never, ...forUpdate(this.db) });
        if (!current) throw this.missing(id);
        const holder = await manager.findOne(this.kind.entity, { where: { nameKey: fields.nameKey } as never });
        if (holder && holder.id !== id) throw this.duplicate();
        await manager.update(this.kind.entity, { id }, fields as never);
        // The index holds names folded to lower case: only a new name key changes a document.
        if (current.nameKey !== fields.nameKey) await this.search.refresh(manager, await this.bookIds(manager, id));
        return this.kind.response({ ...current, ...fields });
      }),
    );
  }

  async remove(principal: Principal, id: string): Promise<void> {
    assertRole(principal, 'ADMIN');
    await this.db.transaction(async (manager) => {
      const current = await manager.findOne(this.kind.entity, { where: { id } as never, ...forUpdate(this.db) });
      if (!current) throw this.missing(id);
      const { entity, column } = this.kind.links;
      const books = await manager.count(entity, { where: { [column]: id } });
      if (books > 0) throw conflict(`${this.kind.label} is still used by ${books} book(s)`, `${this.kind.label.toUpperCase()}_IN_USE`);
      await manager.delete(this.kind.entity, { id });
    });
  }

  /** The books pointing at the row `id`: their search documents carry its name. */
  private async bookIds(manager: EntityManager, id: string): Promise<string[]> {
    const { entity, column, book } = this.kind.links;
    const rows = (await manager.find(entity, { where: { [column]: id }, select: { [book]: true } })) as unknown as Record<string, string>[];
    return rows.map((row) => row[book]);
  }

  private async guardUnique<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw this.duplicate();
      throw error;
    }
  }
}

export function toAuthorResponse(author: Author): AuthorResponseDto {
  return { id: author.id, firstName: author.firstName, lastName: author.lastName, biography: author.biography, country: author.country };
}

/** "first last" as a reader would write it. */
export const authorName = (author: Pick<Author, 'firstName' | 'lastName'>) => [author.firstName, author.lastName].filter(Boolean).join(' ');

export function authorCatalogue(db: Database, search: SearchIndex) {
  return new ReferenceCatalogue<Author, AuthorRequestDto, AuthorResponseDto>(db, search, {
    entity: Author,
    label: 'Author',
    // Surname first, as a bookshop shelves them.
    order: { lastName: 'ASC', firstName: 'ASC', id: 'ASC' },
    fields: (dto) => {
      const firstName = dto.firstName.trim();
      const lastName = trimmed(dto.lastName);
      return { firstName, lastName, biography: trimmed(dto.biography), country: trimmed(dto.country), nameKey: storedKey(authorName({ firstName, lastName })) };
    },
    response: toAuthorResponse,
    links: { entity: BookAuthor, column: 'authorId', book: 'bookId' },
  });
}

export function categoryCatalogue(db: Database, search: SearchIndex) {
  return new ReferenceCatalogue<Category, CategoryRequestDto, CategoryResponseDto>(db, search, {
    entity: Category,
    label: 'Category',
    order: { nameKey: 'ASC', id: 'ASC' },
    fields: (dto) => ({ name: dto.name.trim(), description: trimmed(dto.description), nameKey: storedKey(dto.name) }),
    response: (row) => ({ id: row.id, name: row.name, description: row.description }),
    links: { entity: Book, column: 'categoryId', book: 'id' },
  });
}

export function publisherCatalogue(db: Database, search: SearchIndex) {
  return new ReferenceCatalogue<Publisher, PublisherRequestDto, PublisherResponseDto>(db, search, {
    entity: Publisher,
    label: 'Publisher',
    order: { nameKey: 'ASC', id: 'ASC' },
    fields: (dto) => ({ name: dto.name.trim(), address: trimmed(dto.address), nameKey: storedKey(dto.name) }),
    response: (row) => ({ id: row.id, name: row.name, address: row.address }),
    links: { entity: Book, column: 'publisherId', book: 'id' },
  });
}

export type AuthorCatalogue = ReturnType<typeof authorCatalogue>;
export type CategoryCatalogue = ReturnType<typeof categoryCatalogue>;
export type PublisherCatalogue = ReturnType<typeof publisherCatalogue>;
