/** Builds the book service (REST routes, subgraph, cover store, order consumers, optional demo catalogue) from its dependencies. */
import path from 'node:path';
import { openDatabase } from '../../platform/database';
import { ProcessedEvent } from '../../platform/events/consumer';
import { EventTables1732000000000 } from '../../platform/migrations/1732000000000-EventTables';
import type { ProcessDeps } from '../../platform/run';
import { assembleService, type BookstoreService } from '../../rest-compat/service';
import { jwksVerifierFor, type TokenVerifier } from '../../platform/auth';
import { coverStoreFor, S3CoverStore, type CoverStore } from './covers';
import { Author, Book, BookAuthor, Category, OrderStock, Publisher } from './entities';
import { Inventory } from './inventory';
import { CreateBooks1732000000300 } from './migrations/1732000000300-CreateBooks';
import { Catalogue1732000000301 } from './migrations/1732000000301-Catalogue';
import { authorCatalogue, categoryCatalogue, publisherCatalogue } from './references';
import { bookLoaders, bookResolvers } from './resolvers';
import { catalogueRoutes, mountCoverUpload } from './routes';
import { seedDemoCatalogue } from './seed';
import { BookService, type Catalogue } from './service';

export interface BookServiceDeps extends ProcessDeps {
  /** Defaults to the auth service's JWKS at `config.urls.auth`. */
  verifier?: TokenVerifier;
  /** Fill an empty catalogue with the demo books; `config.seedDemoCatalogue` unless given. */
  seedDemoCatalogue?: boolean;
  /** Defaults to the store the configuration names (a directory under DATA_DIR, or S3). */
  covers?: CoverStore;
}

export type BookServiceRuntime = BookstoreService & Catalogue;

export async function createBookService(deps: BookServiceDeps): Promise<BookServiceRuntime> {
  const { config, bus } = deps;
  const logger = deps.logger.child({ service: 'book' });
  const db = await openDatabase({
    service: 'book',
    config,
    entities: [Book, BookAuthor, Author, Category, Publisher, OrderStock, ProcessedEvent],
    migrations: [EventTables1732000000000, CreateBooks1732000000300, Catalogue1732000000301],
  });
  const covers = deps.covers ?? coverStoreFor(config);
  const catalogue: Catalogue = {
    books: new BookService(db, covers, logger),
    authors: authorCatalogue(db),
    categories: categoryCatalogue(db),
    publishers: publisherCatalogue(db),
  };
  if (deps.seedDemoCatalogue ?? config.seedDemoCatalogue) {
    try {
      const inserted = await seedDemoCatalogue(catalogue.books);
      if (inserted > 0) logger.info({ inserted }, 'demo catalogue seeded');
    } catch (error) {
      await db.close();
      throw error;
    }
  }
  const inventory = new Inventory(db, logger);
  const verifier = deps.verifier ?? jwksVerifierFor(config, { bus: deps.bus, logger, service: 'book' });
  const runtime = await assembleService({
    name: 'book',
    description: 'Book catalogue',
    db,
    logger,
    bus,
    basePath: '/api',
    routes: catalogueRoutes(catalogue, verifier),
    mountRaw: (app) => mountCoverUpload(app, catalogue.books, verifier),
    registerMetrics: (registry) => inventory.registerMetrics(registry),
    subgraph: { schemaFile: path.join(__dirname, 'schema.graphql'), resolvers: bookResolvers(catalogue), loaders: bookLoaders(catalogue), verifier },
    subscribe: () => inventory.subscribe(bus),
    beforeStop: async () => {
      if (covers instanceof S3CoverStore) covers.close();
    },
  });
  return Object.assign(runtime, catalogue);
}
