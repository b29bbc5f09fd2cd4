/** Builds the order service (REST routes, subgraph, payment consumers, outbox relay) from its dependencies. */
import path from 'node:path';
import { openDatabase } from '../../platform/database';
import { ProcessedEvent } from '../../platform/events/consumer';
import { OutboxEvent, OutboxRelay } from '../../platform/events/outbox';
import { EventTables1732000000000 } from '../../platform/migrations/1732000000000-EventTables';
import type { ProcessDeps } from '../../platform/run';
import { assembleService, type BookstoreService } from '../../rest-compat/service';
import { jwksVerifierFor } from '../../platform/auth';
import { Order, OrderItem, RefundedPayment } from './entities';
import { subscribeOrderEvents } from './events';
import { CreateOrders1732000000400 } from './migrations/1732000000400-CreateOrders';
import { RefundedPayments1732000000410 } from './migrations/1732000000410-RefundedPayments';
import { OrderRefundStatus1732000000420 } from './migrations/1732000000420-OrderRefundStatus';
import { orderLoaders, orderResolvers } from './resolvers';
import { orderRoutes } from './routes';
import { OrderService } from './service';

export async function createOrderService(deps: ProcessDeps): Promise<BookstoreService & { orders: OrderService }> {
  const { config, bus } = deps;
  const logger = deps.logger.child({ service: 'order' });
  const db = await openDatabase({
    service: 'order',
    config,
    entities: [Order, OrderItem, RefundedPayment, OutboxEvent, ProcessedEvent],
    migrations: [EventTables1732000000000, CreateOrders1732000000400, RefundedPayments1732000000410, OrderRefundStatus1732000000420],
  });
  const relay = new OutboxRelay({ db, bus, logger });
  const orders = new OrderService(db, logger, () => relay.wake());
  const verifier = jwksVerifierFor(config, { bus, logger, service: 'order' });
  const runtime = await assembleService({
    name: 'order',
    description: 'Orders created from successful payments',
    db,
    logger,
    bus,
    basePath: '/api/orders',
    routes: orderRoutes(orders, verifier),
    subgraph: { schemaFile: path.join(__dirname, 'schema.graphql'), resolvers: orderResolvers(orders), loaders: orderLoaders(orders), verifier },
    relay,
    subscribe: () => subscribeOrderEvents(bus, db, logger, orders),
  });
  return Object.assign(runtime, { orders });
}
