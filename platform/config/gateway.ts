/** The gateway's own settings: which browser origins it serves, and how its GraphQL half behaves. */
import os from 'node:os';
import { ConfigError, type EnvReader } from './env';

export interface GatewayConfig {
  /** Browser origins the gateway allows cross-origin (CORS); empty allows none, `*` allows any. */
  corsOrigins: string[];
  /**
   * Also allow `http://localhost:<port>` and `http://127.0.0.1:<port>` (any port), so a shop
   * frontend on a developer's machine (Vite on 5173) calls the gateway directly. `CORS_ALLOW_LOCALHOST`,
   * on by default in the embedded default only.
   */
  corsAllowLocalhost: boolean;
  /**
   * `APOLLO_TELEMETRY_DISABLED` (default true; "0" or "false" opts in): @apollo/gateway >= 2.14
   * sends usage metrics to Apollo unless it is off. The library reads process.env itself when the
   * gateway is constructed, so loadConfig also writes the variable there (platform/config.ts).
   */
  apolloTelemetryDisabled: boolean;
  /**
   * `GATEWAY_DEDUPLICATE_QUERIES` (default true): identical subgraph queries in flight at the gateway
   * share one call (gateway/subgraph-fetcher.ts).
   */
  gatewayDeduplicateQueries: boolean;
  /**
   * `GATEWAY_DEDUPLICATE_REQUESTS` (default true): identical GraphQL queries from clients in flight at
   * the gateway share one execution and its answer (gateway/shared-requests.ts).
   */
  gatewayDeduplicateRequests: boolean;
  /**
   * `GATEWAY_WORKERS` (default 1): gateway processes serving one port, a number or `auto` (one per
   * core the process may use). Above 1, `node dist/gateway/main.js` is a primary that runs them
   * (platform/workers.ts); the embedded default (`npm start`) is always one process.
   */
  gatewayWorkers: number;
  /**
   * Open subscription streams (gateway/subscriptions/): at most this many per caller and per gateway
   * process; with `GATEWAY_WORKERS` above 1, per worker.
   */
  subscriptionLimits: {
    /** `GATEWAY_SUBSCRIPTIONS_PER_CALLER` (default 10): a caller's streams open at once, all its sessions together. */
    perCaller: number;
    /** `GATEWAY_SUBSCRIPTIONS_MAX` (default 10000): streams open at once on this process. */
    perProcess: number;
  };
}

export function readGateway(env: EnvReader): GatewayConfig {
  return {
    corsOrigins: (env.list('CORS_ORIGINS') ?? []).map(corsOrigin),
    corsAllowLocalhost: (env.read('CORS_ALLOW_LOCALHOST') ?? (env.embedded ? 'true' : 'false')) === 'true',
    apolloTelemetryDisabled: apolloTelemetryDisabled(env.read('APOLLO_TELEMETRY_DISABLED')),
    gatewayDeduplicateQueries: env.bool('GATEWAY_DEDUPLICATE_QUERIES', true),
    gatewayDeduplicateRequests: env.bool('GATEWAY_DEDUPLICATE_REQUESTS', true),
    gatewayWorkers: gatewayWorkers(env.read('GATEWAY_WORKERS')),
    subscriptionLimits: { perCaller: env.int('GATEWAY_SUBSCRIPTIONS_PER_CALLER', 10, 1), perProcess: env.int('GATEWAY_SUBSCRIPTIONS_MAX', 10_000, 1) },
  };
}

function gatewayWorkers(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 1;
  if (raw === 'auto') return os.availableParallelism();
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1 || count > 256) throw new ConfigError(`GATEWAY_WORKERS must be "auto" or a whole number from 1 to 256, got "${raw}"`);
  return count;
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

/** `APOLLO_TELEMETRY_DISABLED`: true unless "0" or "false". */
export function apolloTelemetryDisabled(raw: string | undefined): boolean {
  const value = raw?.toLowerCase() ?? '1';
  if (!['1', 'true', '0', 'false'].includes(value)) throw new ConfigError(`APOLLO_TELEMETRY_DISABLED must be 1, true, 0 or false, got "${raw}"`);
  return value === '1' || value === 'true';
}
