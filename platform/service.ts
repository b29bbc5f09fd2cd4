/**
 * The shape every service has once built: `{ app, start(port), stop() }`. `start` listens and
 * starts the outbox relay and consumers; `stop` drains HTTP, stops consuming, flushes the relay
 * and closes the database, in that order.
 */
import type { Express, Router } from 'express';
import { createServiceApp, type HealthCheck } from '../rest-compat/app';
import type { Database } from './database';
import type { Subscription } from './events/bus';
import type { OutboxRelay } from './events/outbox';
import { listen, type Listening } from './http';
import type { Logger } from './logger';
import { createSubgraphEndpoint, type SubgraphOptions } from './subgraph';

export interface BookstoreService {
  readonly name: string;
  readonly app: Express;
  readonly db: Database;
  /** Resolves with the bound port (useful with port 0). */
  start(port: number, host?: string): Promise<number>;
  stop(): Promise<void>;
}

export interface RuntimeParts {
  name: string;
  app: Express;
  db: Database;
  logger: Logger;
  relay?: OutboxRelay;
  subscribe?: () => Promise<Subscription[]>;
  /** Background work started once the service listens (e.g. bootstrap data); stopped before the database closes. */
  afterStart?: () => void;
  beforeStop?: () => Promise<void>;
}

export const OUTBOX_FLUSH_ON_STOP_MS = 5000;

export function serviceRuntime(parts: RuntimeParts): BookstoreService {
  let listening: Listening | undefined;
  let subscriptions: Subscription[] = [];
  return {
    name: parts.name,
    app: parts.app,
    db: parts.db,
    async start(port, host = '0.0.0.0') {
      listening = await listen(parts.app, port, host);
      parts.relay?.start();
      subscriptions = (await parts.subscribe?.()) ?? [];
      parts.afterStart?.();
      parts.logger.info({ port: listening.port }, `${parts.name} service listening`);
      return listening.port;
    },
    /**
     * Graceful: new connections are refused while in-flight requests finish (up to 10 s); the
     * consumers stop after the message in hand, committing the offsets of what they applied; what
     * the outbox still holds is published (up to 5 s, if the bus takes it); then the database closes.
     */
    async stop() {
      await listening?.close();
      await Promise.all(subscriptions.map((s) => s.stop()));
      await parts.beforeStop?.();
      await parts.relay?.stop({ flushMs: OUTBOX_FLUSH_ON_STOP_MS });
      await parts.db.close();
      parts.logger.info(`${parts.name} service stopped`);
    },
  };
}

export interface AssembleOptions<L> {
  name: string;
  description: string;
  db: Database;
  logger: Logger;
  health: Record<string, HealthCheck>;
  /** The REST routes and where they live, e.g. `/api/orders`. */
  basePath: string;
  routes: Router;
  /** The federated subgraph served at `/graphql` beside the REST routes. */
  subgraph?: Omit<SubgraphOptions<L>, 'name' | 'logger'>;
  mountRaw?: (app: Express) => void;
  trustProxy?: string;
  relay?: OutboxRelay;
  subscribe?: () => Promise<Subscription[]>;
  afterStart?: () => void;
  beforeStop?: () => Promise<void>;
}

/**
 * Puts a service together the same way every time: its subgraph (closing the database if that
 * fails), the REST app with the routes and `/graphql`, and the runtime that starts and stops it all.
 */
export async function assembleService<L>(options: AssembleOptions<L>): Promise<BookstoreService> {
  const { name, db, logger } = options;
  const graphql = options.subgraph
    ? await createSubgraphEndpoint({ ...options.subgraph, name, logger }).catch(async (error: unknown) => {
        await db.close();
        throw error;
      })
    : undefined;
  const app = createServiceApp({
    name,
    description: options.description,
    logger,
    health: options.health,
    trustProxy: options.trustProxy,
    mountRaw: options.mountRaw,
    mount: (app) => {
      app.use(options.basePath, options.routes);
      if (graphql) app.use('/graphql', graphql.middleware);
    },
  });
  return serviceRuntime({
    name,
    app,
    db,
    logger,
    relay: options.relay,
    subscribe: options.subscribe,
    afterStart: options.afterStart,
    beforeStop: async () => {
      await options.beforeStop?.();
      await graphql?.stop();
    },
  });
}
