/** The auth service's settings: token signing and lifetimes, login and registration limits, the first admin. */
import path from 'node:path';
import { ConfigError, type EnvReader } from './env';

/** The admin account the embedded default creates (`npm start`), unless told another. */
export const EMBEDDED_ADMIN = { email: 'admin@bookstore.local', password: 'Admin12345' };

export interface AuthConfig {
  jwt: {
    issuer: string;
    audience: string;
    accessTokenTtlMs: number;
    refreshTokenTtlMs: number;
    privateKeyFile: string;
    /** The public key (PEM) the auth service signed with before the current one; published beside it until its tokens expired. */
    previousPublicKeyFile: string | undefined;
    /** Seconds of clock difference between services that token expiry and issue times forgive. */
    clockToleranceSec: number;
    /** How long after its rotation a refresh token presented again is a parallel refresh, not reuse (CONTRACT §2: 10 s). */
    refreshGraceMs: number;
  };
  /** Failed logins for one account (from any client) allowed per window before 429. */
  loginThrottle: { windowMs: number; maxFailures: number };
  /** `REGISTRATION_PROFILE_TIMEOUT_MS` (default 5 s): how long registration waits for the user service to create the profile (503 beyond). */
  registrationProfileTimeoutMs: number;
  bootstrapAdmin: { email: string; password: string } | undefined;
  authRateLimit: { windowMs: number; max: number };
}

/** `dataDir` holds the signing key unless JWT_PRIVATE_KEY_FILE says where. */
export function readAuth(env: EnvReader, dataDir: string): AuthConfig {
  const adminEmail = env.read('BOOTSTRAP_ADMIN_EMAIL') ?? (env.embedded ? EMBEDDED_ADMIN.email : undefined);
  const adminPassword = env.read('BOOTSTRAP_ADMIN_PASSWORD') ?? (env.embedded ? EMBEDDED_ADMIN.password : undefined);
  if ((adminEmail === undefined) !== (adminPassword === undefined)) {
    throw new ConfigError('BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD must be set together');
  }
  const previousPublicKeyFile = env.read('JWT_PREVIOUS_PUBLIC_KEY_FILE');
  return {
    jwt: {
      issuer: env.read('JWT_ISSUER') ?? 'bookstore-auth',
      audience: env.read('JWT_AUDIENCE') ?? 'bookstore',
      accessTokenTtlMs: 15 * 60 * 1000,
      refreshTokenTtlMs: 7 * 24 * 60 * 60 * 1000,
      privateKeyFile: path.resolve(env.read('JWT_PRIVATE_KEY_FILE') ?? path.join(dataDir, 'keys', 'jwt-private.pem')),
      previousPublicKeyFile: previousPublicKeyFile === undefined ? undefined : path.resolve(previousPublicKeyFile),
      clockToleranceSec: 5,
      refreshGraceMs: env.int('AUTH_REFRESH_GRACE_MS', 10_000),
    },
    loginThrottle: {
      windowMs: env.int('LOGIN_THROTTLE_WINDOW_MS', 15 * 60 * 1000, 1),
      maxFailures: env.int('LOGIN_THROTTLE_MAX_FAILURES', 10, 1),
    },
    registrationProfileTimeoutMs: env.int('REGISTRATION_PROFILE_TIMEOUT_MS', 5000, 1),
    bootstrapAdmin: adminEmail && adminPassword ? { email: adminEmail, password: adminPassword } : undefined,
    authRateLimit: {
      windowMs: env.int('AUTH_RATE_LIMIT_WINDOW_MS', 60_000, 1),
      max: env.int('AUTH_RATE_LIMIT_MAX', 20, 1),
    },
  };
}
