/** The auth service: accounts, logins, RS256 access tokens (JWKS), refresh tokens and device sessions, the bootstrap admin (CONTRACT §2). */
import { localJwksVerifier } from '../../platform/auth';
import { AppError } from '../../platform/errors';
import { DatabaseRateLimitStore } from '../../platform/rate-limit-store';
import { buildService, type ServiceDeps } from '../../rest-compat/service';
import path from 'node:path';
import { createMailer, MAIL_ENTITIES, MAIL_MIGRATIONS } from '../../platform/mail';
import { AccountEmails } from './account-email';
import { AbandonedRegistration, Account, AccountToken, RefreshToken, Session } from './entities';
import { authConsumers } from './events';
import { loadOrCreateSigningKey } from './keys';
import { AddressRequestLimit, LoginThrottle } from './login-throttle';
import { CreateAuthTables1732000000200 } from './migrations/1732000000200-CreateAuthTables';
import { SessionsInUseAndLoginThrottle1732000000210 } from './migrations/1732000000210-SessionsInUseAndLoginThrottle';
import { RateLimitCounters1732000000900 } from './migrations/1732000000900-RateLimitCounters';
import { AbandonedRegistrations1732000000910 } from './migrations/1732000000910-AbandonedRegistrations';
import { LoginAttemptsInRateLimitCounters1732000000920 } from './migrations/1732000000920-LoginAttemptsInRateLimitCounters';
import { AccountTokensAndVerifiedEmail1732000000930 } from './migrations/1732000000930-AccountTokensAndVerifiedEmail';
import { LoginTurns1732000000940 } from './migrations/1732000000940-LoginTurns';
import { AccountTokensPerRequest1732000000950 } from './migrations/1732000000950-AccountTokensPerRequest';
import { userServiceProfiles } from './profiles';
import { authLoaders, authResolvers } from './resolvers';
import { authRoutes } from './routes';
import { AuthService, BCRYPT_COST } from './service';
import { SessionDirectory } from './sessions';

export function createAuthService(deps: ServiceDeps) {
  return buildService(deps, {
    name: 'auth',
    description: 'Accounts, sessions and access tokens',
    dir: __dirname,
    basePath: '/auth',
    entities: [Account, Session, RefreshToken, AbandonedRegistration, AccountToken, ...MAIL_ENTITIES],
    migrations: [
      CreateAuthTables1732000000200,
      SessionsInUseAndLoginThrottle1732000000210,
      RateLimitCounters1732000000900,
      AbandonedRegistrations1732000000910,
      LoginAttemptsInRateLimitCounters1732000000920,
      ...MAIL_MIGRATIONS,
      AccountTokensAndVerifiedEmail1732000000930,
      LoginTurns1732000000940,
      AccountTokensPerRequest1732000000950,
    ],
    build: ({ config, db, logger, events }) => {
      const mailer = createMailer({ config, db, logger }, path.join(__dirname, 'mail'));
      const emails = new AccountEmails({
        db,
        templates: mailer.templates,
        shopUrl: config.mail.shopUrl,
        requests: new AddressRequestLimit(db, config.loginThrottle),
        wake: () => mailer.sender.wake(),
        bcryptCost: BCRYPT_COST,
        logger,
      });
      for (const [template, preparer] of Object.entries(emails.preparers())) mailer.sender.prepare(template, preparer);
      const key = loadOrCreateSigningKey(config.jwt.privateKeyFile, config.jwt.previousPublicKeyFile);
      const settings = { ...config.jwt };
      const profiles = userServiceProfiles(() => config.urls.user, config.internalApiKey, config.registrationProfileTimeoutMs);
      const auth = new AuthService(db, key, settings, profiles, new LoginThrottle(db, config.loginThrottle), emails, logger);
      const sessions = new SessionDirectory(db, settings.refreshTokenTtlMs);
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

      return {
        routes: authRoutes({
          service: auth,
          emails,
          sessions,
          key,
          verifier,
          limits: { ...config.authRateLimit, store: (prefix) => new DatabaseRateLimitStore(db, prefix) },
          internalApiKey: config.internalApiKey,
          revocationHorizonMs: settings.accessTokenTtlMs + settings.clockToleranceSec * 1000,
        }),
        verifier,
        trustProxy: config.trustProxy,
        subgraph: { resolvers: authResolvers(sessions, config.mail), loaders: authLoaders(sessions) },
        consumers: () => authConsumers(events, auth),
        afterStart: () => {
          mailer.sender.start();
          if (config.bootstrapAdmin) bootstrap = bootstrapAdmin(config.bootstrapAdmin.email, config.bootstrapAdmin.password);
        },
        beforeStop: async () => {
          stopping = true;
          await bootstrap;
          await mailer.sender.stop();
        },
        expose: { auth, emails, bootstrapDone: () => bootstrap },
      };
    },
  });
}

export type AuthServiceRuntime = Awaited<ReturnType<typeof createAuthService>>;
