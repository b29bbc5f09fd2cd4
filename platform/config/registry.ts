/**
 * The schema registry's settings (CONTRACT §13): how the gateway reports field usage, how long the
 * analytics service keeps it, and how `npm run schema:check` and `npm run schema:publish` reach it
 * and judge a change by it.
 */
import { ConfigError, type EnvReader } from './env';

export interface UsageConfig {
  usage: {
    /** `USAGE_REPORTING` (default true): the gateway counts each operation's fields and reports them to the analytics service. */
    reporting: boolean;
    /** `USAGE_REPORT_INTERVAL_MS` (default 10 s): how often the gateway hands its counts over. */
    reportIntervalMs: number;
    /** `USAGE_MAX_PENDING` (default 20,000): counters the gateway holds between reports; what comes beyond is dropped and counted. */
    maxPending: number;
    /** `USAGE_RETENTION_DAYS` (default 30): the analytics service deletes usage older than this. */
    retentionDays: number;
  };
}

export function readUsage(env: EnvReader): UsageConfig {
  return {
    usage: {
      reporting: env.bool('USAGE_REPORTING', true),
      reportIntervalMs: env.int('USAGE_REPORT_INTERVAL_MS', 10_000, 10),
      maxPending: env.int('USAGE_MAX_PENDING', 20_000, 1),
      retentionDays: env.int('USAGE_RETENTION_DAYS', 30, 1),
    },
  };
}

/** Where the schema tools find the registry: the analytics service (internal key) or the gateway (an admin's token). */
export interface RegistryAccess {
  /** `SCHEMA_REGISTRY_URL`: the analytics service's base URL (with `INTERNAL_API_KEY`), or the gateway's (with `SCHEMA_REGISTRY_TOKEN`). */
  url: string | undefined;
  /** `SCHEMA_REGISTRY_TOKEN`: an ADMIN access token; the tools then use the admin routes, which the gateway serves. */
  token: string | undefined;
  /** `INTERNAL_API_KEY`: the internal routes' key, used when no token is given. */
  internalApiKey: string | undefined;
}

export type SchemaCheckBase = 'git' | 'published';

export interface SchemaCheckSettings {
  registry: RegistryAccess;
  /** `SCHEMA_USAGE_FILE`: a usage export (`GET /analytics/schema/usage-export`) to judge by instead of the registry. */
  usageFile: string | undefined;
  /** `SCHEMA_CHECK_WINDOW_DAYS` (default 7): the usage that counts is this recent. */
  windowDays: number;
  /** `SCHEMA_CHECK_USAGE_THRESHOLD` (default 1): requests within the window from which a coordinate is in use. */
  threshold: number;
  /** `SCHEMA_CHECK_EXCLUDED_CLIENTS`: client names whose usage does not count (comma-separated). */
  excludedClients: string[];
  /** `SCHEMA_CHECK_ALLOW_NO_USAGE` (default false): a breaking change passes, with a note, when there is no usage data to judge it by. */
  allowNoUsage: boolean;
  /** `SCHEMA_CHECK_BASE` (default git): compare with the git base, or with the version production runs (`published`, from the registry). */
  base: SchemaCheckBase;
}

function registryAccess(env: EnvReader): RegistryAccess {
  const url = env.read('SCHEMA_REGISTRY_URL');
  if (url !== undefined && !/^https?:\/\/[^/]+/.test(url)) throw new ConfigError(`SCHEMA_REGISTRY_URL must be an http(s) URL, got "${url}"`);
  return { url: url?.replace(/\/+$/, ''), token: env.read('SCHEMA_REGISTRY_TOKEN'), internalApiKey: env.read('INTERNAL_API_KEY') };
}

export function readSchemaCheck(env: EnvReader): SchemaCheckSettings {
  const base = env.read('SCHEMA_CHECK_BASE') ?? 'git';
  if (base !== 'git' && base !== 'published') throw new ConfigError(`SCHEMA_CHECK_BASE must be git or published, got "${base}"`);
  const settings: SchemaCheckSettings = {
    registry: registryAccess(env),
    usageFile: env.read('SCHEMA_USAGE_FILE'),
    windowDays: env.int('SCHEMA_CHECK_WINDOW_DAYS', 7, 1),
    threshold: env.int('SCHEMA_CHECK_USAGE_THRESHOLD', 1, 1),
    excludedClients: env.list('SCHEMA_CHECK_EXCLUDED_CLIENTS') ?? [],
    allowNoUsage: env.bool('SCHEMA_CHECK_ALLOW_NO_USAGE', false),
    base,
  };
  if (base === 'published' && settings.registry.url === undefined) throw new ConfigError('SCHEMA_CHECK_BASE=published needs SCHEMA_REGISTRY_URL');
  return settings;
}

export interface SchemaPublishSettings {
  /** Publishing takes the internal routes: the analytics service's URL and the internal key. */
  registry: RegistryAccess & { url: string; internalApiKey: string };
  /** `SCHEMA_PUBLISHED_BY`: who publishes; default git's user.email, else the system user. */
  publishedBy: string | undefined;
  /** `SCHEMA_COMMIT`: the commit published; default git's HEAD. */
  commit: string | undefined;
}

export function readSchemaPublish(env: EnvReader): SchemaPublishSettings {
  const registry = registryAccess(env);
  if (registry.url === undefined) throw new ConfigError('SCHEMA_REGISTRY_URL must be set to the analytics service to publish, e.g. http://127.0.0.1:8088');
  if (registry.internalApiKey === undefined) throw new ConfigError('INTERNAL_API_KEY must be set to publish (the registry takes versions on its internal route)');
  return {
    registry: { ...registry, url: registry.url, internalApiKey: registry.internalApiKey },
    publishedBy: env.read('SCHEMA_PUBLISHED_BY'),
    commit: env.read('SCHEMA_COMMIT'),
  };
}
