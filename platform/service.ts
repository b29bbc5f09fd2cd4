/**
 * The shape every service has once built: `{ app, start(port), stop() }`. `start` listens and
 * starts the outbox relay and consumers; `stop` drains HTTP, stops consuming, flushes the relay
 * and closes the database, in that order.
 */
import type { Express } from 'express';
import type { Database } from './database';
import type { Subscription } from './events/bus';
import type { OutboxRelay } from './events/outbox';
import { listen, type Listening } from './http';
import type { Logger } from './logger';

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
    async stop() {
      await listening?.close();
      await Promise.all(subscriptions.map((s) => s.stop()));
      await parts.beforeStop?.();
      await parts.relay?.stop();
      await parts.db.close();
      parts.logger.info(`${parts.name} service stopped`);
    },
  };
}
