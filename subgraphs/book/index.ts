/** Builds the book service (REST routes, subgraph, optional demo catalogue) from its dependencies. */
import path from 'node:path';
import type { Config } from '../../platform/config';
import { openDatabase } from '../../platform/database';
import type { Logger } from '../../platform/logger';
import { assembleService, type BookstoreService } from '../../platform/service';
import { jwksVerifierFor, type TokenVerifier } from '../../rest-compat/auth';
import { Book } from './entities';
import { CreateBooks1732000000300 } from './migrations/1732000000300-CreateBooks';
import { bookLoaders, bookResolvers } from './resolvers';
import { bookRoutes } from './routes';
import { seedDemoCatalogue } from './seed';
import { BookService } from './service';

export interface BookServiceDeps {
  config: Config;
  logger: Logger;
  /** Defaults to the auth service's JWKS at `config.urls.auth`. */
  verifier?: TokenVerifier;
  /** Fill an empty catalogue with the demo books; `config.seedDemoCatalogue` unless given. */
  seedDemoCatalogue?: boolean;
}

export type BookServiceRuntime = BookstoreService & { books: BookService };

export async function createBookService(deps: BookServiceDeps): Promise<BookServiceRuntime> {
  const { config } = deps;
  const logger = deps.logger.child({ service: 'book' });
  const db = await openDatabase({
    service: 'book',
    config,
    entities: [Book],
    migrations: [CreateBooks1732000000300],
  });
  const books = new BookService(db);
  if (deps.seedDemoCatalogue ?? config.seedDemoCatalogue) {
    try {
      const inserted = await seedDemoCatalogue(books);
      if (inserted > 0) logger.info({ inserted }, 'demo catalogue seeded');
    } catch (error) {
      await db.close();
      throw error;
    }
  }
  const verifier = deps.verifier ?? jwksVerifierFor(config);
  const runtime = await assembleService({
    name: 'book',
    description: 'Book catalogue',
    db,
    logger,
    // The service publishes and consumes no events, so its health is its database's.
    health: { db: () => db.ping() },
    basePath: '/api/books',
    routes: bookRoutes(books, verifier),
    subgraph: { schemaFile: path.join(__dirname, 'schema.graphql'), resolvers: bookResolvers(books), loaders: bookLoaders(books), verifier },
  });
  return Object.assign(runtime, { books });
}
