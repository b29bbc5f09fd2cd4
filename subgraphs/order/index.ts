/** Builds the order service (REST routes, payment consumers, outbox relay) from its dependencies. */
import { openDatabase } from '../../platform/database';
import { ProcessedEvent } from '../../platform/events/consumer';
import { OutboxEvent, OutboxRelay } from '../../platform/events/outbox';
import { EventTables1732000000000 } from '../../platform/migrations/1732000000000-EventTables';
import type { ProcessDeps } from '../../platform/run';
import { serviceRuntime, type BookstoreService } from '../../platform/service';
import { createServiceApp } from '../../rest-compat/app';
import { jwksVerifierFor } from '../../rest-compat/auth';
import { Order, OrderItem } from './entities';
import { subscribeOrderEvents } from './events';
import { CreateOrders1732000000400 } from './migrations/1732000000400-CreateOrders';
import { orderRoutes } from './routes';
import { OrderService } from './service';

export async function createOrderService(deps: ProcessDeps): Promise<BookstoreService & { orders: OrderService }> {
  const { config, bus } = deps;
  const logger = deps.logger.child({ service: 'order' });
  const db = await openDatabase({
    service: 'order',
    config,
    entities: [Order, OrderItem, OutboxEvent, ProcessedEvent],
    migrations: [EventTables1732000000000, CreateOrders1732000000400],
  });
  const relay = new OutboxRelay({ db, bus, logger });
  const orders = new OrderService(db, logger, () => relay.wake());

  const app = createServiceApp({
    name: 'order',
    description: 'Orders created from successful payments',
    logger,
    health: { db: () => db.ping(), bus: () => bus.health() },
    mount: (app) => app.use('/api/orders', orderRoutes(orders, jwksVerifierFor(config))),
  });
  const runtime = serviceRuntime({ name: 'order', app, db, logger, relay, subscribe: () => subscribeOrderEvents(bus, db, logger, orders) });
  return Object.assign(runtime, { orders });
}
