/** GraphQL resolvers of the book subgraph, as thin as routes.ts: reading the catalogue is public. */
import type DataLoader from 'dataloader';
import { MoneyScalar, publicLoader, type MapperCovers, type SubgraphContext } from '../../platform/subgraph';
import { parseUuid } from '../../platform/validation';
import type { BookResponseDto } from '../../platform/contracts/books';
import type { AuthorResponseDto, CategoryResponseDto, PublisherResponseDto } from './dto';
import type { ReferenceCatalogue } from './references';
import { parseListQuery, parseSearchQuery } from './dto';
import type { BookResolvers, Resolvers } from './generated/resolvers-types';
import type { Catalogue } from './service';

export interface BookLoaders {
  /** A reference to a book that no longer exists resolves to null. */
  books: DataLoader<string, BookResponseDto | null>;
  authors: DataLoader<string, AuthorResponseDto | null>;
  categories: DataLoader<string, CategoryResponseDto | null>;
  publishers: DataLoader<string, PublisherResponseDto | null>;
}

type Ctx = SubgraphContext<BookLoaders>;

/** The DTO the generated types put in place of the SDL's Book (schema/codegen.ts) has every field its references do not resolve. */
export type BookMappers = [MapperCovers<BookResolvers, BookResponseDto, 'authors' | 'category' | 'publisher'>];

/** Batches a catalogue's reads by id; which entity it stores does not matter here. */
function loaderOf<Res>(catalogue: Pick<ReferenceCatalogue<never, unknown, Res>, 'byIds'>) {
  return publicLoader(async (ids) => {
    const byId = await catalogue.byIds(ids);
    return ids.map((id) => byId.get(id) ?? null);
  });
}

export function bookLoaders(catalogue: Catalogue): () => BookLoaders {
  return () => ({
    books: publicLoader(async (ids) => {
      const byId = new Map((await catalogue.books.getBooks(ids)).map((book) => [book.id, book]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    authors: loaderOf(catalogue.authors),
    categories: loaderOf(catalogue.categories),
    publishers: loaderOf(catalogue.publishers),
  });
}

/** GraphQL arguments as the REST query string would carry them, so both get the same 400 rules. */
const asQueryString = (value: number | string | null | undefined) => (value === null || value === undefined ? undefined : String(value));

export function bookResolvers(catalogue: Catalogue): Resolvers<Ctx> {
  return {
    Money: MoneyScalar,
    Query: {
      books: async (_, args) => {
        const query = Object.fromEntries((['q', 'categoryId', 'publisherId', 'authorId', 'limit', 'offset'] as const).map((name) => [name, asQueryString(args[name])]));
        return (await catalogue.books.listBooks(parseListQuery(query))).books;
      },
      book: (_, args) => catalogue.books.getBook(parseUuid(args.id, 'id')),
      searchBooks: async (_, args) => {
        const page = await catalogue.books.searchBooks(parseSearchQuery({ q: args.q, limit: asQueryString(args.limit), offset: asQueryString(args.offset) }));
        return {
          total: page.total,
          hits: page.books.map(({ highlights, ...book }) => ({ book, highlights: Object.entries(highlights).map(([field, fragment]) => ({ field, fragment })) })),
        };
      },
      authors: () => catalogue.authors.list(),
      categories: () => catalogue.categories.list(),
      publishers: () => catalogue.publishers.list(),
    },
    Book: {
      __resolveReference: (reference, ctx) => ctx.loaders.books.load(reference.id),
      authors: async (book, _, ctx) =>
        (await ctx.loaders.authors.loadMany(book.authorIds)).filter((author): author is AuthorResponseDto => author !== null && !(author instanceof Error)),
      category: (book, _, ctx) => (book.categoryId ? ctx.loaders.categories.load(book.categoryId) : null),
      publisher: (book, _, ctx) => (book.publisherId ? ctx.loaders.publishers.load(book.publisherId) : null),
    },
  };
}
