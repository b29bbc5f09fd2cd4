/** Builds the auth service (REST routes, JWKS, user-deleted consumer, bootstrap admin) from its dependencies. */
import type { Config } from '../../platform/config';
import { openDatabase } from '../../platform/database';
import type { EventBus } from '../../platform/events/bus';
import { ProcessedEvent } from '../../platform/events/consumer';
import { OutboxEvent } from '../../platform/events/outbox';
import type { Logger } from '../../platform/logger';
import { EventTables1732000000000 } from '../../platform/migrations/1732000000000-EventTables';
import { assembleService, type BookstoreService } from '../../platform/service';
import { localJwksVerifier } from '../../rest-compat/auth';
import { AppError } from '../../rest-compat/errors';
import { Account, RefreshToken, Session } from './entities';
import { subscribeAuthEvents } from './events';
import { loadOrCreateSigningKey } from './keys';
import { CreateAuthTables1732000000200 } from './migrations/1732000000200-CreateAuthTables';
import { userServiceProfiles } from './profiles';
import { authRoutes } from './routes';
import { AuthService } from './service';

export interface AuthServiceDeps {
  config: Config;
  logger: Logger;
  bus: EventBus;
}

export type AuthServiceRuntime = BookstoreService & { auth: AuthService; bootstrapDone(): Promise<void> };

export async function createAuthService(deps: AuthServiceDeps): Promise<AuthServiceRuntime> {
  const { config, bus } = deps;
  const logger = deps.logger.child({ service: 'auth' });
  const db = await openDatabase({
    service: 'auth',
    config,
    entities: [Account, Session, RefreshToken, OutboxEvent, ProcessedEvent],
    migrations: [EventTables1732000000000, CreateAuthTables1732000000200],
  });
  const key = loadOrCreateSigningKey(config.jwt.privateKeyFile);
  const settings = { ...config.jwt };
  const profiles = userServiceProfiles(() => config.urls.user, config.internalApiKey);
  const auth = new AuthService(db, key, settings, profiles, logger);
  const verifier = localJwksVerifier(key.jwks, settings);

  let stopping = false;
  let bootstrap: Promise<void> = Promise.resolve();
  /** The user service may start after this one: keep trying until the admin exists. */
  const bootstrapAdmin = async (email: string, password: string) => {
    for (let delay = 500; !stopping; delay = Math.min(delay * 2, 10_000)) {
      try {
        if (await auth.ensureAdmin(email, password)) logger.info({ email }, 'bootstrap admin created');
        return;
      } catch (error) {
        const retryable = error instanceof AppError && error.status === 503;
        logger.warn({ err: error, retryInMs: delay }, 'bootstrap admin not created yet');
        if (!retryable) return;
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  };

  const runtime = await assembleService({
    name: 'auth',
    description: 'Accounts, sessions and access tokens',
    db,
    logger,
    trustProxy: config.trustProxy,
    health: { db: () => db.ping(), bus: () => bus.health() },
    basePath: '/auth',
    routes: authRoutes(auth, key, verifier, config.authRateLimit),
    subscribe: () => subscribeAuthEvents(bus, db, logger, auth),
    afterStart: () => {
      if (config.bootstrapAdmin) bootstrap = bootstrapAdmin(config.bootstrapAdmin.email, config.bootstrapAdmin.password);
    },
    beforeStop: async () => {
      stopping = true;
      await bootstrap;
    },
  });
  return Object.assign(runtime, { auth, bootstrapDone: () => bootstrap });
}
