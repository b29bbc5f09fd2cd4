/**
 * The analytics service: admin reporting on orders, revenue, books sold and payments, fed by payment
 * events (CONTRACT §8), and the schema registry: the schema's versions and its field usage (§13).
 */
import type { DatabaseOptions } from '../../platform/database';
import { buildService, openServiceDatabase, type ServiceDeps, type ServiceTables } from '../../rest-compat/service';
import { BookSales, DailyAggregate, PaymentFact } from './entities';
import { analyticsConsumer } from './events';
import { CreateAnalytics1732000000600 } from './migrations/1732000000600-CreateAnalytics';
import { RefundsInAnalytics1732000000610 } from './migrations/1732000000610-RefundsInAnalytics';
import { SchemaRegistry1732000000650 } from './migrations/1732000000650-SchemaRegistry';
import { buildRegistry, REGISTRY_ENTITIES } from './registry';
import { analyticsLoaders, analyticsResolvers } from './resolvers';
import { analyticsRoutes } from './routes';
import { AnalyticsService } from './service';

const tables: ServiceTables = {
  name: 'analytics',
  entities: [PaymentFact, DailyAggregate, BookSales, ...REGISTRY_ENTITIES],
  migrations: [CreateAnalytics1732000000600, RefundsInAnalytics1732000000610, SchemaRegistry1732000000650],
};

/** The analytics database alone (`npm run analytics:rebuild`). */
export function analyticsDatabase(config: DatabaseOptions['config']) {
  return openServiceDatabase(tables, config);
}

export function createAnalyticsService(deps: ServiceDeps) {
  return buildService(deps, {
    ...tables,
    description: 'Admin reporting on orders, revenue, books sold and payments',
    dir: __dirname,
    basePath: '/analytics',
    build: ({ db, verifier, events, logger, config }) => {
      const analytics = new AnalyticsService(db);
      const registry = buildRegistry({ db, logger, config });
      return {
        routes: analyticsRoutes(analytics, verifier, registry),
        subgraph: { resolvers: analyticsResolvers(analytics, registry.registry), loaders: analyticsLoaders(analytics) },
        consumers: () => [analyticsConsumer(events, db.kind)],
        afterStart: () => registry.start(),
        beforeStop: () => registry.stop(),
        expose: { analytics, registry: registry.registry },
      };
    },
  });
}
