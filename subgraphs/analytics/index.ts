/** Builds the analytics service (REST routes, subgraph, batch consumer of payment events) from its dependencies. */
import path from 'node:path';
import { openDatabase, type DatabaseOptions } from '../../platform/database';
import { ProcessedEvent } from '../../platform/events/consumer';
import { EventTables1732000000000 } from '../../platform/migrations/1732000000000-EventTables';
import type { ProcessDeps } from '../../platform/run';
import { assembleService, type BookstoreService } from '../../rest-compat/service';
import { OutboxEvent } from '../../platform/events/outbox';
import { jwksVerifierFor } from '../../platform/auth';
import { BookSales, DailyAggregate, PaymentFact } from './entities';
import { subscribeAnalyticsEvents } from './events';
import { CreateAnalytics1732000000600 } from './migrations/1732000000600-CreateAnalytics';
import { analyticsLoaders, analyticsResolvers } from './resolvers';
import { analyticsRoutes } from './routes';
import { AnalyticsService } from './service';

export function analyticsDatabase(config: DatabaseOptions['config']) {
  return openDatabase({
    service: 'analytics',
    config,
    entities: [PaymentFact, DailyAggregate, BookSales, ProcessedEvent, OutboxEvent],
    migrations: [EventTables1732000000000, CreateAnalytics1732000000600],
  });
}

export async function createAnalyticsService(deps: ProcessDeps): Promise<BookstoreService & { analytics: AnalyticsService }> {
  const { config, bus } = deps;
  const logger = deps.logger.child({ service: 'analytics' });
  const db = await analyticsDatabase(config);
  const analytics = new AnalyticsService(db);
  const verifier = jwksVerifierFor(config, { bus, logger, service: 'analytics' });
  const runtime = await assembleService({
    name: 'analytics',
    description: 'Admin reporting on orders, revenue, books sold and payments',
    db,
    logger,
    bus,
    basePath: '/analytics',
    routes: analyticsRoutes(analytics, verifier),
    subgraph: { schemaFile: path.join(__dirname, 'schema.graphql'), resolvers: analyticsResolvers(analytics), loaders: analyticsLoaders(analytics), verifier },
    subscribe: () => subscribeAnalyticsEvents(bus, db, logger),
  });
  return Object.assign(runtime, { analytics });
}
