/**
 * Where each process listens and how the services reach and believe each other: ports, URLs, the
 * bind address, the internal key and whose forwarded headers are trusted.
 */
import { randomBytes } from 'node:crypto';
import { addressMatcher, gatewayProof, type ForwardedTrust } from '../forwarded';
import { ConfigError, type EnvReader } from './env';

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

export interface NetworkConfig {
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
}

export function readNetwork(env: EnvReader): NetworkConfig {
  const ports = { ...DEFAULT_PORTS };
  for (const name of Object.keys(ports) as (keyof typeof ports)[]) {
    ports[name] = env.int(`${name.toUpperCase()}_PORT`, ports[name]);
  }
  const urls = {} as Record<ServiceName, string>;
  for (const name of SERVICE_NAMES) {
    urls[name] = (env.read(`${name.toUpperCase()}_URL`) ?? `http://127.0.0.1:${ports[name]}`).replace(/\/$/, '');
  }

  const internalApiKey = env.read('INTERNAL_API_KEY') ?? (env.embedded ? randomBytes(24).toString('base64url') : undefined);
  if (internalApiKey === undefined) {
    throw new ConfigError('INTERNAL_API_KEY must be set (the shared secret of internal calls between services)');
  }
  const trustProxy: ForwardedTrust = {
    gatewayAddresses: addresses(env, 'GATEWAY_ADDRESSES', ['loopback']),
    frontProxies: env.read('TRUST_PROXY') === 'false' ? [] : addresses(env, 'TRUST_PROXY', []),
    proof: gatewayProof(internalApiKey),
  };
  return { internalApiKey, trustProxy, bindHost: env.read('BIND_HOST') ?? (env.embedded ? '127.0.0.1' : '0.0.0.0'), ports, urls };
}

/** A list of addresses and ranges as platform/forwarded.ts matches them, or `fallback` when unset. */
function addresses(env: EnvReader, name: string, fallback: string[]): string[] {
  const list = env.list(name) ?? fallback;
  try {
    addressMatcher(list);
  } catch (error) {
    throw new ConfigError(`${name} must list addresses, CIDR ranges, loopback, linklocal or uniquelocal: ${(error as Error).message}`);
  }
  return list;
}
