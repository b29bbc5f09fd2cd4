/** The catalogue as the admin pages use it: books with their stock, authors, categories, publishers, covers. */
import { api } from './operations';
import { rest } from './rest';

export interface CatalogueBook {
  id: string;
  isbn: string;
  title: string;
  price: number;
  coverImageUrl: string | null;
  publisherId: string | null;
  categoryId: string | null;
  authorIds: string[];
  /** Null: the book's inventory is not tracked. */
  stock: number | null;
}

/** A row of the books page: from a search, also the fields that matched, as HTML fragments with `<mark>`. */
export type BookRow = Pick<CatalogueBook, 'id' | 'isbn' | 'title' | 'price' | 'stock' | 'coverImageUrl'> & { highlights?: { field: string; fragment: string }[] };

export interface Author {
  id: string;
  firstName: string;
  lastName: string | null;
  biography: string | null;
  country: string | null;
}

export interface Category {
  id: string;
  name: string;
  description: string | null;
}

export interface Publisher {
  id: string;
  name: string;
  address: string | null;
}

export type ReferenceKind = 'authors' | 'categories' | 'publishers';
export type Reference = Author | Category | Publisher;

export const catalogue = {
  /** A page of books by title, with the number of matches. */
  books: async (q: string, limit: number, offset: number) => {
    const query = new URLSearchParams({ limit: String(limit), offset: String(offset), ...(q ? { q } : {}) });
    const { data, total } = await rest<CatalogueBook[]>('GET', `/api/books/?${query.toString()}`);
    return { books: data as BookRow[], total: total ?? data.length };
  },
  /** A page of the full-text search (GraphQL `searchBooks`), best match first. */
  search: async (q: string, limit: number, offset: number) => {
    const page = await api.searchBooks(q, limit, offset);
    return { books: page.hits.map((hit): BookRow => ({ ...hit.book, price: Number(hit.book.price), highlights: hit.highlights })), total: page.total };
  },
  list: async (kind: ReferenceKind) => (await rest<Reference[]>('GET', `/api/${kind}/`)).data,
  create: async (kind: ReferenceKind, body: Record<string, string | null>) => (await rest<Reference>('POST', `/api/${kind}/create`, body)).data,
  update: async (kind: ReferenceKind, id: string, body: Record<string, string | null>) => (await rest<Reference>('PUT', `/api/${kind}/update/${id}`, body)).data,
  remove: async (kind: ReferenceKind, id: string) => {
    await rest<string>('DELETE', `/api/${kind}/${id}`);
  },
  uploadCover: async (bookId: string, file: File) => {
    const form = new FormData();
    form.append('file', file);
    return (await rest<CatalogueBook>('POST', `/api/books/${bookId}/cover`, form)).data;
  },
};

/**
 * Where this page loads a cover from: a cover the gateway serves itself by its path on this
 * origin (the page's security policy allows only it); one in a bucket is only linked.
 */
export function coverOnThisOrigin(url: string): string | undefined {
  const parsed = new URL(url, window.location.origin);
  return /^\/api\/books\/[0-9a-f-]{36}\/cover$/.test(parsed.pathname) ? `${parsed.pathname}${parsed.search}` : undefined;
}
