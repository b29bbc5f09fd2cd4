/** The book service: the catalogue (books, authors, categories, publishers), covers and stock (CONTRACT §4). */
import { buildService, type ServiceDeps } from '../../rest-compat/service';
import { coverStoreFor, S3CoverStore, type CoverStore } from './covers';
import { Author, Book, BookAuthor, Category, OrderStock, Publisher, StockHold } from './entities';
import { bookConsumers } from './events';
import { Inventory } from './inventory';
import { CreateBooks1732000000300 } from './migrations/1732000000300-CreateBooks';
import { Catalogue1732000000301 } from './migrations/1732000000301-Catalogue';
import { BookSearch1732000000302 } from './migrations/1732000000302-BookSearch';
import { ShortSearchWords1732000000303 } from './migrations/1732000000303-ShortSearchWords';
import { StockHolds1732000000304 } from './migrations/1732000000304-StockHolds';
import { authorCatalogue, categoryCatalogue, publisherCatalogue } from './references';
import { bookLoaders, bookResolvers } from './resolvers';
import { catalogueRoutes, mountCoverUpload, stockRoutes } from './routes';
import { SearchIndex } from './search-index';
import { seedDemoCatalogue } from './seed';
import { BookService, type Catalogue } from './service';

export interface BookServiceDeps extends ServiceDeps {
  /** Fill an empty catalogue with the demo books; `config.seedDemoCatalogue` unless given. */
  seedDemoCatalogue?: boolean;
  /** Defaults to the store the configuration names (a directory under DATA_DIR, or S3). */
  covers?: CoverStore;
}

export function createBookService(deps: BookServiceDeps) {
  return buildService(deps, {
    name: 'book',
    description: 'Book catalogue',
    dir: __dirname,
    basePath: '/api',
    entities: [Book, BookAuthor, Author, Category, Publisher, OrderStock, StockHold],
    migrations: [CreateBooks1732000000300, Catalogue1732000000301, BookSearch1732000000302, ShortSearchWords1732000000303, StockHolds1732000000304],
    build: async ({ config, db, logger, verifier, events }) => {
      const covers = deps.covers ?? coverStoreFor(config);
      const search = new SearchIndex(db);
      const inventory = new Inventory(db, logger, config.stockLowThreshold, config.stockHolds);
      const catalogue: Catalogue = {
        books: new BookService(db, covers, logger, search, config.stockLowThreshold, inventory),
        authors: authorCatalogue(db, search),
        categories: categoryCatalogue(db, search),
        publishers: publisherCatalogue(db, search),
      };
      await search.checkServer();
      const indexed = await search.indexMissing();
      if (indexed > 0) logger.info({ indexed }, 'books added to the search index');
      if (deps.seedDemoCatalogue ?? config.seedDemoCatalogue) {
        const inserted = await seedDemoCatalogue(catalogue.books);
        if (inserted > 0) logger.info({ inserted }, 'demo catalogue seeded');
      }
      return {
        routes: catalogueRoutes(catalogue, verifier),
        moreRoutes: { '/api/books/internal': stockRoutes(inventory, config.internalApiKey) },
        mountRaw: (app) => mountCoverUpload(app, catalogue.books, verifier),
        registerMetrics: (registry) => inventory.registerMetrics(registry),
        subgraph: { resolvers: bookResolvers(catalogue), loaders: bookLoaders(catalogue) },
        consumers: () => bookConsumers(events, inventory),
        beforeStop: async () => {
          if (covers instanceof S3CoverStore) covers.close();
        },
        expose: { ...catalogue, inventory },
      };
    },
  });
}

export type BookServiceRuntime = Awaited<ReturnType<typeof createBookService>>;
