/** GraphQL resolvers of the book subgraph, as thin as routes.ts: reading the catalogue is public. */
import type DataLoader from 'dataloader';
import { MoneyScalar, publicLoader, type SubgraphContext, type SubgraphResolvers } from '../../platform/subgraph';
import { parseUuid } from '../../rest-compat/validation';
import type { BookResponseDto } from './dto';
import { parseListQuery } from './routes';
import type { BookService } from './service';

export interface BookLoaders {
  /** A reference to a book that no longer exists resolves to null. */
  books: DataLoader<string, BookResponseDto | null>;
}

type Ctx = SubgraphContext<BookLoaders>;

export function bookLoaders(service: BookService): () => BookLoaders {
  return () => ({
    books: publicLoader(async (ids) => {
      const byId = new Map((await service.getBooks(ids)).map((book) => [book.id, book]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
  });
}

/** GraphQL arguments as the REST query string would carry them, so both get the same 400 rules. */
const asQueryString = (value: number | null | undefined) => (value === null || value === undefined ? undefined : String(value));

export function bookResolvers(service: BookService): SubgraphResolvers<BookLoaders> {
  return {
    Money: MoneyScalar,
    Query: {
      books: (_: unknown, args: { q?: string | null; limit?: number | null; offset?: number | null }) =>
        service.listBooks(parseListQuery({ q: args.q ?? undefined, limit: asQueryString(args.limit), offset: asQueryString(args.offset) })),
      book: (_: unknown, args: { id: string }) => service.getBook(parseUuid(args.id, 'id')),
    },
    Book: {
      __resolveReference: (reference: { id: string }, ctx: Ctx) => ctx.loaders.books.load(reference.id),
    },
  };
}
