/** GraphQL resolvers of the book subgraph, as thin as routes.ts: reading the catalogue is public. */
import type DataLoader from 'dataloader';
import { MoneyScalar, publicLoader, type SubgraphContext, type SubgraphResolvers } from '../../platform/subgraph';
import { parseUuid } from '../../platform/validation';
import type { BookResponseDto } from '../../platform/contracts/books';
import type { AuthorResponseDto, CategoryResponseDto, PublisherResponseDto } from './dto';
import type { ReferenceCatalogue } from './references';
import { parseListQuery } from './dto';
import type { Catalogue } from './service';

export interface BookLoaders {
  /** A reference to a book that no longer exists resolves to null. */
  books: DataLoader<string, BookResponseDto | null>;
  authors: DataLoader<string, AuthorResponseDto | null>;
  categories: DataLoader<string, CategoryResponseDto | null>;
  publishers: DataLoader<string, PublisherResponseDto | null>;
}

type Ctx = SubgraphContext<BookLoaders>;

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

interface BooksArgs {
  q?: string | null;
  categoryId?: string | null;
  publisherId?: string | null;
  authorId?: string | null;
  limit?: number | null;
  offset?: number | null;
}

export function bookResolvers(catalogue: Catalogue): SubgraphResolvers<BookLoaders> {
  return {
    Money: MoneyScalar,
    Query: {
      books: async (_: unknown, args: BooksArgs) => {
        const query = Object.fromEntries((['q', 'categoryId', 'publisherId', 'authorId', 'limit', 'offset'] as const).map((name) => [name, asQueryString(args[name])]));
        return (await catalogue.books.listBooks(parseListQuery(query))).books;
      },
      book: (_: unknown, args: { id: string }) => catalogue.books.getBook(parseUuid(args.id, 'id')),
      authors: () => catalogue.authors.list(),
      categories: () => catalogue.categories.list(),
      publishers: () => catalogue.publishers.list(),
    },
    Book: {
      __resolveReference: (reference: { id: string }, ctx: Ctx) => ctx.loaders.books.load(reference.id),
      authors: async (book: BookResponseDto, _: unknown, ctx: Ctx) =>
        (await ctx.loaders.authors.loadMany(book.authorIds)).filter((author): author is AuthorResponseDto => author !== null && !(author instanceof Error)),
      category: (book: BookResponseDto, _: unknown, ctx: Ctx) => (book.categoryId ? ctx.loaders.categories.load(book.categoryId) : null),
      publisher: (book: BookResponseDto, _: unknown, ctx: Ctx) => (book.publisherId ? ctx.loaders.publishers.load(book.publisherId) : null),
    },
  };
}
