/**
 * The shape every service has once built: `{ app, start(port), stop() }`. `start` starts the
 * outbox relay and consumers, then listens; `stop` drains HTTP, stops consuming, flushes the relay
 * and closes the database, in that order.
 */
import type { Express, Router } from 'express';
import { createServiceApp, type ServiceAppOptions } from './app';
import type { Database } from '../platform/database';
import type { EventBus, Subscription } from '../platform/events/bus';
import type { OutboxRelay } from '../platform/events/outbox';
import { listen, type Listening } from '../platform/http';
import type { ForwardedTrust } from '../platform/forwarded';
import type { Logger } from '../platform/logger';
import { createSubgraphEndpoint, type SubgraphOptions } from '../platform/subgraph';

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
      // Consumers first: a replica answers its health check only once it is wholly up, and a start
      // that fails (and is retried) never had a port open.
      parts.relay?.start();
      subscriptions = (await parts.subscribe?.()) ?? [];
      listening = await listen(parts.app, port, host);
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
  /** The service's bus: the health check reports it beside the database. */
  bus: EventBus;
  /** The REST routes and where they live, e.g. `/api/orders`. */
  basePath: string;
  routes: Router;
  /** The federated subgraph served at `/graphql` beside the REST routes. */
  subgraph?: Omit<SubgraphOptions<L>, 'name' | 'logger'>;
  mountRaw?: (app: Express) => void;
  /** Whose forwarded headers to believe: `config.trustProxy` where the client's address matters (rate limits). */
  trustProxy?: ForwardedTrust;
  registerMetrics?: ServiceAppOptions['registerMetrics'];
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
  const { name, db, logger, bus } = options;
  const graphql = options.subgraph
    ? await createSubgraphEndpoint({ ...options.subgraph, name, logger }).catch(async (error: unknown) => {
        await db.close();
        throw error;
      })
    : undefined;
  const verifier = options.subgraph?.verifier;
  const app = createServiceApp({
    name,
    description: options.description,
    logger,
    health: { db: () => db.ping(), bus: () => bus.health() },
    trustProxy: options.trustProxy,
    mountRaw: options.mountRaw,
    registerMetrics: options.registerMetrics,
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
    // A verifier that follows session revocations starts with the service's consumers.
    subscribe: async () => [...((await options.subscribe?.()) ?? []), ...(verifier?.follow ? [await verifier.follow()] : [])],
    afterStart: options.afterStart,
    beforeStop: async () => {
      await options.beforeStop?.();
      await graphql?.stop();
    },
  });
}
