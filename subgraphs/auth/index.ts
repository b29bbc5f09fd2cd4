/** Builds the auth service (REST routes, JWKS, sessions subgraph, outbox relay, user-deleted consumer, bootstrap admin) from its dependencies. */
import path from 'node:path';
import type { Config } from '../../platform/config';
import { openDatabase } from '../../platform/database';
import type { EventBus } from '../../platform/events/bus';
import { ProcessedEvent } from '../../platform/events/consumer';
import { OutboxEvent, OutboxRelay } from '../../platform/events/outbox';
import type { Logger } from '../../platform/logger';
import { EventTables1732000000000 } from '../../platform/migrations/1732000000000-EventTables';
import { DatabaseRateLimitStore } from '../../platform/rate-limit-store';
import { assembleService, type BookstoreService } from '../../rest-compat/service';
import { localJwksVerifier } from '../../platform/auth';
import { AppError } from '../../platform/errors';
import { AbandonedRegistration, Account, RefreshToken, Session } from './entities';
import { subscribeAuthEvents } from './events';
import { loadOrCreateSigningKey } from './keys';
import { LoginThrottle } from './login-throttle';
import { CreateAuthTables1732000000200 } from './migrations/1732000000200-CreateAuthTables';
import { SessionsInUseAndLoginThrottle1732000000210 } from './migrations/1732000000210-SessionsInUseAndLoginThrottle';
import { authLoaders, authResolvers } from './resolvers';
import { RateLimitCounters1732000000900 } from './migrations/1732000000900-RateLimitCounters';
import { AbandonedRegistrations1732000000910 } from './migrations/1732000000910-AbandonedRegistrations';
import { LoginAttemptsInRateLimitCounters1732000000920 } from './migrations/1732000000920-LoginAttemptsInRateLimitCounters';
import { userServiceProfiles } from './profiles';
import { authRoutes } from './routes';
import { AuthService } from './service';
import { SessionDirectory } from './sessions';

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
    entities: [Account, Session, RefreshToken, AbandonedRegistration, OutboxEvent, ProcessedEvent],
    migrations: [
      EventTables1732000000000,
      CreateAuthTables1732000000200,
      SessionsInUseAndLoginThrottle1732000000210,
      RateLimitCounters1732000000900,
      AbandonedRegistrations1732000000910,
      LoginAttemptsInRateLimitCounters1732000000920,
    ],
  });
  const key = loadOrCreateSigningKey(config.jwt.privateKeyFile, config.jwt.previousPublicKeyFile);
  const settings = { ...config.jwt };
  const profiles = userServiceProfiles(() => config.urls.user, config.internalApiKey, config.registrationProfileTimeoutMs);
  const relay = new OutboxRelay({ db, bus, logger });
  const published = () => relay.wake();
  const auth = new AuthService(db, key, settings, profiles, new LoginThrottle(db, config.loginThrottle), logger, published);
  const sessions = new SessionDirectory(db, settings.refreshTokenTtlMs, published);
  // The auth service owns the sessions: it asks its own database rather than waiting for its event.
  const verifier = localJwksVerifier(key.jwks, settings, (principal) => sessions.revoked(principal.sessionId));

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
    bus,
    basePath: '/auth',
    routes: authRoutes({
      service: auth,
      sessions,
      key,
      verifier,
      limits: { ...config.authRateLimit, store: (prefix) => new DatabaseRateLimitStore(db, prefix) },
      internalApiKey: config.internalApiKey,
      revocationHorizonMs: settings.accessTokenTtlMs + settings.clockToleranceSec * 1000,
    }),
    subgraph: { schemaFile: path.join(__dirname, 'schema.graphql'), resolvers: authResolvers(sessions), loaders: authLoaders(sessions), verifier },
    relay,
    subscribe: () => subscribeAuthEvents(bus, db, logger, auth, published),
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
