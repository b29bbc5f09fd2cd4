/**
 * The one place that reads the environment. `loadConfig()` is called once per process (by a
 * `main.ts` or the embedded starter) and its result is handed to every service as a dependency.
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { addressMatcher, gatewayProof, type ForwardedTrust } from './forwarded';

export type ServiceName = 'auth' | 'user' | 'book' | 'order' | 'payment' | 'analytics';

export const SERVICE_NAMES: readonly ServiceName[] = ['auth', 'user', 'book', 'order', 'payment', 'analytics'];

export const DEFAULT_PORTS: Record<ServiceName | 'gateway', number> = {
  gateway: 8080,
  auth: 8081,
  user: 8082,
  book: 8083,
  order: 8084,
  payment: 8087,
  analytics: 8088,
};

export interface Config {
  logLevel: string;
  dataDir: string;
  /** MySQL/MariaDB server URL without a database; each service uses `<dbPrefix><service>`. */
  dbUrl: string | undefined;
  dbPrefix: string;
  kafkaBrokers: string[] | undefined;
  kafkaClientId: string;
  /** Prefix of every topic and consumer group, so several systems can share one broker. */
  eventNamespace: string;
  internalApiKey: string;
  /**
   * Whose forwarded headers (X-Forwarded-For: the client, for per-client rate limits) are believed,
   * in the gateway and in the services (platform/forwarded.ts): `GATEWAY_ADDRESSES` (the gateway's
   * addresses, loopback by default), `TRUST_PROXY` (the proxies in front of the gateway, none by
   * default) and the gateway's proof, derived from INTERNAL_API_KEY.
   */
  trustProxy: ForwardedTrust;
  /** Address every listener binds: all interfaces in containers, loopback for the embedded default. */
  bindHost: string;
  ports: Record<ServiceName | 'gateway', number>;
  /** Base URLs (scheme, host, port) the services use to reach each other. */
  urls: Record<ServiceName, string>;
  /** Browser origins the gateway allows cross-origin (CORS); empty allows none, `*` allows any. */
  corsOrigins: string[];
  /**
   * Also allow `http://localhost:<port>` and `http://127.0.0.1:<port>` (any port), so a shop
   * frontend on a developer's machine (Vite on 5173) calls the gateway directly. `CORS_ALLOW_LOCALHOST`,
   * on by default in the embedded default only.
   */
  corsAllowLocalhost: boolean;
  /** Where book covers are kept (CONTRACT §4). */
  covers: {
    /** Scheme, host and port that locally stored covers are served under (`COVER_BASE_URL`); the gateway's by default. */
    baseUrl: string;
    /** Set when `S3_BUCKET` is: covers go to an S3-compatible bucket instead of `<dataDir>/covers`. */
    s3:
      | {
          bucket: string;
          /** `S3_ENDPOINT`: MinIO or another S3-compatible store (addressed path-style); unset means AWS. */
          endpoint: string | undefined;
          /** `S3_REGION`, default us-east-1. Credentials come from the SDK's default chain (AWS_ACCESS_KEY_ID, ...). */
          region: string;
          /** `S3_PUBLIC_URL`: the base of the URLs written into `coverImageUrl` (default: the endpoint and bucket). */
          publicUrl: string;
        }
      | undefined;
  };
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
  /** Fill an empty book catalogue with a dozen demo books at start (`SEED_DEMO_CATALOGUE`). */
  seedDemoCatalogue: boolean;
  /**
   * `APOLLO_TELEMETRY_DISABLED` (default true; "0" or "false" opts in): @apollo/gateway >= 2.14
   * sends usage metrics to Apollo unless it is off. The library reads process.env itself when the
   * gateway is constructed, so loadConfig also writes the variable there (see below).
   */
  apolloTelemetryDisabled: boolean;
  /**
   * `GATEWAY_DEDUPLICATE_QUERIES` (default true): identical subgraph queries in flight at the gateway
   * share one call (gateway/subgraph-fetcher.ts).
   */
  gatewayDeduplicateQueries: boolean;
  authRateLimit: { windowMs: number; max: number };
  /**
   * `STARTUP_TIMEOUT_MS` (default 60 s): how long a service keeps retrying a start that failed for a
   * passing reason (broker or database still coming up) before it gives up and exits.
   */
  startupTimeoutMs: number;
  /** `KAFKA_PARTITIONS` (default 3): partitions of the topics a service creates; the most consumers of one group that share work. */
  kafkaPartitions: number;
  stripe: {
    /** Unset: the payment service cannot start (the embedded default uses the simulator's key). */
    secretKey: string | undefined;
    webhookSecret: string | undefined;
    /** Where the SDK sends API calls; unset means api.stripe.com. */
    apiUrl: string | undefined;
    currency: string;
    /** The built-in simulator's port, when this process runs it. */
    simulatorPort: number;
  };
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

export interface LoadOptions {
  /** The embedded default fills in what a lone service must be given explicitly. */
  embedded?: boolean;
}

/** `*`, or a browser origin (`https://shop.example.com[:port]`) in the form browsers send it. */
function corsOrigin(entry: string): string {
  if (entry === '*') return entry;
  let url: URL | undefined;
  try {
    url = new URL(entry);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`CORS_ORIGINS must list "*" or origins such as https://shop.example.com, got "${entry}"`);
  }
  return url.origin;
}

export const EMBEDDED_ADMIN = { email: 'admin@bookstore.local', password: 'Admin12345' };

export function loadConfig(env: Env = process.env, options: LoadOptions = {}): Config {
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const int = (name: string, fallback: number, min = 0): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) {
      throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
    }
    return value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = read(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be true or false, got "${raw}"`);
    return raw === 'true';
  };

  const dataDir = path.resolve(read('DATA_DIR') ?? 'data');
  const dbUrl = read('DB_URL');
  if (dbUrl !== undefined && !/^mysql:\/\//.test(dbUrl)) {
    throw new ConfigError(`DB_URL must be a mysql:// URL, got "${dbUrl}"`);
  }
  const dbPrefix = read('DB_PREFIX') ?? 'bookstore_';
  if (!/^[A-Za-z0-9_]{1,40}$/.test(dbPrefix)) {
    throw new ConfigError(`DB_PREFIX may hold only letters, digits and underscores, got "${dbPrefix}"`);
  }

  const ports = { ...DEFAULT_PORTS };
  for (const name of Object.keys(ports) as (keyof typeof ports)[]) {
    ports[name] = int(`${name.toUpperCase()}_PORT`, ports[name]);
  }
  const urls = {} as Record<ServiceName, string>;
  for (const name of SERVICE_NAMES) {
    urls[name] = (read(`${name.toUpperCase()}_URL`) ?? `http://127.0.0.1:${ports[name]}`).replace(/\/$/, '');
  }

  const internalApiKey = read('INTERNAL_API_KEY') ?? (options.embedded ? randomBytes(24).toString('base64url') : undefined);
  if (internalApiKey === undefined) {
    throw new ConfigError('INTERNAL_API_KEY must be set (the shared secret of internal calls between services)');
  }

  const addresses = (name: string, fallback: string[]): string[] => {
    const raw = read(name);
    const list =
      raw === undefined
        ? fallback
        : raw
            .split(',')
            .map((entry) => entry.trim())
            .filter(Boolean);
    try {
      addressMatcher(list);
    } catch (error) {
      throw new ConfigError(`${name} must list addresses, CIDR ranges, loopback, linklocal or uniquelocal: ${(error as Error).message}`);
    }
    return list;
  };
  const trustProxy: ForwardedTrust = {
    gatewayAddresses: addresses('GATEWAY_ADDRESSES', ['loopback']),
    frontProxies: read('TRUST_PROXY') === 'false' ? [] : addresses('TRUST_PROXY', []),
    proof: gatewayProof(internalApiKey),
  };

  const adminEmail = read('BOOTSTRAP_ADMIN_EMAIL') ?? (options.embedded ? EMBEDDED_ADMIN.email : undefined);
  const adminPassword = read('BOOTSTRAP_ADMIN_PASSWORD') ?? (options.embedded ? EMBEDDED_ADMIN.password : undefined);
  if ((adminEmail === undefined) !== (adminPassword === undefined)) {
    throw new ConfigError('BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD must be set together');
  }

  const brokers = read('KAFKA_BROKERS');
  const corsOrigins = (read('CORS_ORIGINS') ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean)
    .map(corsOrigin);

  const corsAllowLocalhost = (read('CORS_ALLOW_LOCALHOST') ?? (options.embedded ? 'true' : 'false')) === 'true';
  const coverBaseUrl = (read('COVER_BASE_URL') ?? `http://localhost:${ports.gateway}`).replace(/\/$/, '');
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(coverBaseUrl)) throw new ConfigError(`COVER_BASE_URL must be an http(s) URL, got "${coverBaseUrl}"`);
  const s3Bucket = read('S3_BUCKET');
  const s3Endpoint = read('S3_ENDPOINT')?.replace(/\/$/, '');
  if (s3Endpoint !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(s3Endpoint))
    throw new ConfigError(`S3_ENDPOINT must be a scheme, host and port such as http://127.0.0.1:9000, got "${s3Endpoint}"`);
  const s3Region = read('S3_REGION') ?? 'us-east-1';
  const s3 = s3Bucket
    ? {
        bucket: s3Bucket,
        endpoint: s3Endpoint,
        region: s3Region,
        publicUrl: (read('S3_PUBLIC_URL') ?? (s3Endpoint ? `${s3Endpoint}/${s3Bucket}` : `https://${s3Bucket}.s3.${s3Region}.amazonaws.com`)).replace(/\/$/, ''),
      }
    : undefined;

  const simulatorPort = int('STRIPE_SIMULATOR_PORT', 8099);
  const stripeKey = read('STRIPE_SECRET_KEY');
  // The embedded default uses the simulator unless a real key is given without a simulator URL.
  const useSimulator = options.embedded && stripeKey === undefined;
  const stripeApiUrl = read('STRIPE_API_URL') ?? (useSimulator ? `http://127.0.0.1:${simulatorPort}` : undefined);
  if (stripeApiUrl !== undefined && !/^https?:\/\/[^/]+\/?$/.test(stripeApiUrl)) {
    throw new ConfigError(`STRIPE_API_URL must be a scheme, host and port such as http://127.0.0.1:8099, got "${stripeApiUrl}"`);
  }
  // The simulator's well-known webhook secret only beside the simulator itself: with a real key,
  // anyone who read it could sign `payment_intent.succeeded` (CONTRACT §1.2).
  const webhookSecret = read('STRIPE_WEBHOOK_SECRET') ?? (useSimulator ? 'whsec_bookstore_simulator_secret' : undefined);
  if (stripeKey !== undefined && webhookSecret === undefined) {
    throw new ConfigError("STRIPE_WEBHOOK_SECRET must be set when STRIPE_SECRET_KEY is (the secret that signs the provider's webhooks)");
  }
  const currency = (read('PAYMENT_CURRENCY') ?? 'usd').toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) throw new ConfigError(`PAYMENT_CURRENCY must be a three-letter ISO currency code, got "${currency}"`);

  const previousPublicKeyFile = read('JWT_PREVIOUS_PUBLIC_KEY_FILE');

  const apolloTelemetryDisabled = applyApolloTelemetry(read('APOLLO_TELEMETRY_DISABLED'));

  return {
    logLevel: read('LOG_LEVEL') ?? (options.embedded ? 'warn' : 'info'),
    dataDir,
    dbUrl,
    dbPrefix,
    kafkaBrokers: brokers
      ? brokers
          .split(',')
          .map((b) => b.trim())
          .filter(Boolean)
      : undefined,
    kafkaClientId: read('KAFKA_CLIENT_ID') ?? 'bookstore',
    kafkaPartitions: int('KAFKA_PARTITIONS', 3, 1),
    startupTimeoutMs: int('STARTUP_TIMEOUT_MS', 60_000, 0),
    eventNamespace: read('EVENT_NAMESPACE') ?? '',
    internalApiKey,
    trustProxy,
    bindHost: read('BIND_HOST') ?? (options.embedded ? '127.0.0.1' : '0.0.0.0'),
    ports,
    urls,
    corsOrigins,
    corsAllowLocalhost,
    covers: { baseUrl: coverBaseUrl, s3 },
    jwt: {
      issuer: read('JWT_ISSUER') ?? 'bookstore-auth',
      audience: read('JWT_AUDIENCE') ?? 'bookstore',
      accessTokenTtlMs: 15 * 60 * 1000,
      refreshTokenTtlMs: 7 * 24 * 60 * 60 * 1000,
      privateKeyFile: path.resolve(read('JWT_PRIVATE_KEY_FILE') ?? path.join(dataDir, 'keys', 'jwt-private.pem')),
      previousPublicKeyFile: previousPublicKeyFile === undefined ? undefined : path.resolve(previousPublicKeyFile),
      clockToleranceSec: 5,
      refreshGraceMs: int('AUTH_REFRESH_GRACE_MS', 10_000),
    },
    loginThrottle: {
      windowMs: int('LOGIN_THROTTLE_WINDOW_MS', 15 * 60 * 1000, 1),
      maxFailures: int('LOGIN_THROTTLE_MAX_FAILURES', 10, 1),
    },
    registrationProfileTimeoutMs: int('REGISTRATION_PROFILE_TIMEOUT_MS', 5000, 1),
    bootstrapAdmin: adminEmail && adminPassword ? { email: adminEmail, password: adminPassword } : undefined,
    seedDemoCatalogue: (read('SEED_DEMO_CATALOGUE') ?? (options.embedded ? 'true' : 'false')) === 'true',
    apolloTelemetryDisabled,
    gatewayDeduplicateQueries: bool('GATEWAY_DEDUPLICATE_QUERIES', true),
    stripe: {
      secretKey: stripeKey ?? (useSimulator ? 'sk_test_bookstore_simulator' : undefined),
      webhookSecret,
      apiUrl: stripeApiUrl,
      currency,
      simulatorPort,
    },
    authRateLimit: {
      windowMs: int('AUTH_RATE_LIMIT_WINDOW_MS', 60_000, 1),
      max: int('AUTH_RATE_LIMIT_MAX', 20, 1),
    },
  };
}

/**
 * `APOLLO_TELEMETRY_DISABLED`: true unless "0" or "false". @apollo/gateway reads the variable from
 * process.env itself when a gateway is constructed (and then reports usage to Apollo unless it is 1
 * or true), so the decision is written back there: off unless asked for.
 */
function applyApolloTelemetry(raw: string | undefined): boolean {
  const value = raw?.toLowerCase() ?? '1';
  if (!['1', 'true', '0', 'false'].includes(value)) throw new ConfigError(`APOLLO_TELEMETRY_DISABLED must be 1, true, 0 or false, got "${raw}"`);
  const disabled = value === '1' || value === 'true';
  if (disabled) process.env.APOLLO_TELEMETRY_DISABLED = '1';
  return disabled;
}

/**
 * `npm run schema:check` reads only this (it needs no service configuration): `SCHEMA_BASE_REF`,
 * the git ref whose supergraph is the base of the breaking-change check (e.g. origin/main in a pull
 * request's pipeline); unset, the check compares with the previous committed version of the file.
 * It loads a gateway too, so the telemetry switch applies.
 */
export function loadSchemaCheckConfig(env: Env = process.env): { baseRef: string | undefined; apolloTelemetryDisabled: boolean } {
  const baseRef = env.SCHEMA_BASE_REF?.trim();
  const telemetry = env.APOLLO_TELEMETRY_DISABLED?.trim();
  return { baseRef: baseRef ? baseRef : undefined, apolloTelemetryDisabled: applyApolloTelemetry(telemetry ? telemetry : undefined) };
}
