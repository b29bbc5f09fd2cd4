/**
 * The service shell. A service declares what is its own (name, tables, migrations, routes, subgraph
 * resolvers, consumers); the shell adds what every service has: its logger, its database with the
 * event tables, the outbox relay, the token verifier, the REST app with `/graphql` and the health
 * checks, and the runtime `{ app, start(port), stop() }`.
 */
import path from 'node:path';
import type { Express, Router } from 'express';
import { createServiceApp, type ServiceAppOptions } from './app';
import { jwksVerifierFor, type TokenVerifier } from '../platform/auth';
import type { Config, ServiceName } from '../platform/config';
import { openDatabase, type Database, type DatabaseOptions } from '../platform/database';
import type { EventBus, Subscription } from '../platform/events/bus';
import { consume, consumeBatch, consumerGroupOf, type BatchConsumerOptions, type TopicConsumerOptions } from '../platform/events/consumer';
import { EventMetrics } from '../platform/events/metrics';
import { afterEvents } from '../platform/events/after-events';
import { OutboxRelay } from '../platform/events/outbox-relay';
import { EVENT_ENTITIES, EVENT_MIGRATIONS } from '../platform/events/tables';
import type { Topic } from '../platform/events/topics';
import { listen, type Listening } from '../platform/http';
import { traceRequests } from '../platform/telemetry/spans';
import type { ForwardedTrust } from '../platform/forwarded';
import type { Logger } from '../platform/logger';
import type { ProcessDeps } from '../platform/run';
import { createSubgraphEndpoint, type SubgraphOptions } from '../platform/subgraph';

export interface BookstoreService {
  readonly name: string;
  readonly app: Express;
  readonly db: Database;
  /** Resolves with the bound port (useful with port 0). */
  start(port: number, host?: string): Promise<number>;
  stop(): Promise<void>;
}

/** What a service owns in its database; the shell adds the outbox and the applied-events record. */
export interface ServiceTables {
  name: ServiceName;
  entities: DatabaseOptions['entities'];
  migrations: DatabaseOptions['migrations'];
}

/** Opens a service's database: its own tables and migrations, and the event tables every service has. */
export function openServiceDatabase(tables: ServiceTables, config: DatabaseOptions['config']): Promise<Database> {
  return openDatabase({
    service: tables.name,
    config,
    entities: [...tables.entities, ...EVENT_ENTITIES],
    migrations: [...EVENT_MIGRATIONS, ...tables.migrations],
  });
}

/** The consumers' side of the bus, bound to the service's database, logger and consumer group (`<name>-service`). */
export interface ServiceEvents {
  consume<K extends Topic>(options: Omit<TopicConsumerOptions<K>, 'service' | 'bus' | 'db' | 'logger' | 'groupId' | 'metrics'>): Promise<Subscription>;
  consumeBatch(options: Omit<BatchConsumerOptions, 'service' | 'bus' | 'db' | 'logger' | 'groupId' | 'metrics'>): Promise<Subscription>;
}

/** What the shell hands a service's `build`. */
export interface ServiceShell {
  config: Config;
  logger: Logger;
  bus: EventBus;
  db: Database;
  /** The auth service's JWKS, following session revocations; made on first use (the auth service verifies its own way). */
  readonly verifier: TokenVerifier;
  events: ServiceEvents;
  /** The service's event metrics, for a consumer built outside `events` (a group of its own). */
  eventMetrics: EventMetrics;
}

/** What a service builds from the shell. */
export interface ServiceParts<L, E extends object> {
  routes: Router;
  /** Routes mounted under other paths than `basePath` (the order service's /api/webhooks). */
  moreRoutes?: Record<string, Router>;
  /** The subgraph's resolvers and per-request loaders; its SDL is `schema.graphql` in the service's folder. */
  subgraph: Pick<SubgraphOptions<L>, 'resolvers' | 'loaders'>;
  /** The verifier of the routes and the subgraph when not the shell's. */
  verifier?: TokenVerifier;
  consumers?: () => Promise<Subscription>[];
  /** Routes that read the raw body (the Stripe webhook, cover uploads), mounted before the JSON parser. */
  mountRaw?: (app: Express) => void;
  /** Whose forwarded headers to believe: `config.trustProxy` where the client's address matters (rate limits). */
  trustProxy?: ForwardedTrust;
  registerMetrics?: ServiceAppOptions['registerMetrics'];
  /** Background work started once the service listens (e.g. bootstrap data); stopped before the database closes. */
  afterStart?: () => void;
  beforeStop?: () => Promise<void>;
  /** What the built service offers its callers besides the runtime (tests reach the service functions through it). */
  expose: E;
}

export interface ServiceDefinition<L, E extends object> extends ServiceTables {
  description: string;
  /** The service's folder (`__dirname`), where its compiled `schema.graphql` lies. */
  dir: string;
  /** Where the REST routes live, e.g. `/api/orders`. */
  basePath: string;
  build(shell: ServiceShell): ServiceParts<L, E> | Promise<ServiceParts<L, E>>;
}

/** Every service's dependencies; a test may give a verifier of its own. */
export interface ServiceDeps extends ProcessDeps {
  verifier?: TokenVerifier;
}

export const OUTBOX_FLUSH_ON_STOP_MS = 5000;

/**
 * Builds a service from its definition: the database (closed again if anything after it fails),
 * the parts the service builds, its subgraph, the REST app and the runtime that starts and stops it.
 */
export async function buildService<L, E extends object>(deps: ServiceDeps, definition: ServiceDefinition<L, E>): Promise<BookstoreService & E> {
  const { config, bus } = deps;
  const { name } = definition;
  const logger = deps.logger.child({ service: name });
  const db = await openServiceDatabase(definition, config);
  try {
    let verifier = deps.verifier;
    const groupId = consumerGroupOf(name);
    const metrics = new EventMetrics(db, logger);
    // What this service consumes, for the requests that ask to be answered after some events.
    const consumedTopics = new Set<string>();
    const shell: ServiceShell = {
      config,
      logger,
      bus,
      db,
      eventMetrics: metrics,
      get verifier() {
        verifier ??= jwksVerifierFor(config, { bus, logger, service: name });
        return verifier;
      },
      events: {
        consume: (options) => {
          consumedTopics.add(options.topic);
          return consume({ ...options, service: name, bus, db, logger, groupId, metrics });
        },
        consumeBatch: (options) => {
          for (const topic of Object.keys(options.topics)) consumedTopics.add(topic);
          return consumeBatch({ ...options, service: name, bus, db, logger, groupId, metrics });
        },
      },
    };
    const parts = await definition.build(shell);
    const partsVerifier = parts.verifier ?? shell.verifier;
    const graphql = await createSubgraphEndpoint({
      ...parts.subgraph,
      name,
      logger,
      schemaFile: path.join(definition.dir, 'schema.graphql'),
      verifier: partsVerifier,
      limits: config.queryLimits,
    });
    const app = createServiceApp({
      name,
      description: definition.description,
      logger,
      health: { db: () => db.ping(), bus: () => bus.health() },
      trustProxy: parts.trustProxy,
      mountRaw: parts.mountRaw,
      registerMetrics: (registry) => {
        metrics.register(registry);
        parts.registerMetrics?.(registry);
      },
      mount: (app) => {
        app.use(definition.basePath, parts.routes);
        for (const [mountPath, routes] of Object.entries(parts.moreRoutes ?? {})) app.use(mountPath, routes);
        app.use('/graphql', afterEvents({ db, consumer: groupId, topics: consumedTopics, internalApiKey: config.internalApiKey }), graphql.middleware);
      },
    });
    const runtime = serviceRuntime({
      name,
      app,
      db,
      logger,
      relay: new OutboxRelay({ service: name, db, bus, logger }),
      // A verifier that follows session revocations starts with the service's consumers.
      subscribe: async () => [...(await Promise.all(parts.consumers?.() ?? [])), ...(partsVerifier.follow ? [await partsVerifier.follow()] : [])],
      afterStart: parts.afterStart,
      beforeStop: async () => {
        await parts.beforeStop?.();
        await graphql.stop();
      },
    });
    return Object.assign(runtime, parts.expose);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}

interface RuntimeParts {
  name: string;
  app: Express;
  db: Database;
  logger: Logger;
  relay: OutboxRelay;
  subscribe: () => Promise<Subscription[]>;
  afterStart?: () => void;
  beforeStop: () => Promise<void>;
}

/**
 * `start` starts the outbox relay and consumers, then listens; `stop` drains HTTP, stops consuming,
 * flushes the relay and closes the database, in that order.
 */
function serviceRuntime(parts: RuntimeParts): BookstoreService {
  let listening: Listening | undefined;
  let subscriptions: Subscription[] = [];
  return {
    name: parts.name,
    app: parts.app,
    db: parts.db,
    async start(port, host = '0.0.0.0') {
      // Consumers first: a replica answers its health check only once it is wholly up, and a start
      // that fails (and is retried) never had a port open.
      parts.relay.start();
      subscriptions = await parts.subscribe();
      listening = await listen(traceRequests(parts.name, parts.app), port, host);
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
      await parts.beforeStop();
      await parts.relay.stop({ flushMs: OUTBOX_FLUSH_ON_STOP_MS });
      await parts.db.close();
      parts.logger.info(`${parts.name} service stopped`);
    },
  };
}
