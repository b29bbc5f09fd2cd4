/**
 * Who the client is (CONTRACT §9): forwarded headers are believed only from the gateway, so no
 * client picks its own rate-limit key.
 *
 * - The gateway sets `X-Forwarded-For` to the address it was connected from. Only when that peer is
 *   a proxy it trusts (`TRUST_PROXY`, none by default) does it keep the peer's own
 *   `X-Forwarded-For` and append to it; otherwise what a client wrote is dropped.
 * - With it the gateway sends `X-Gateway-Proof`, a value derived from INTERNAL_API_KEY, which a
 *   client cannot know.
 * - A service believes forwarded headers only from a peer that is one of the gateway's addresses
 *   (`GATEWAY_ADDRESSES`, loopback by default) and carries the proof; from anyone else they are
 *   removed before any route sees them, so the client is the connection's own address. Behind the
 *   gateway, the hops that `TRUST_PROXY` names are skipped the way the gateway skips them.
 *
 * Address lists hold IPv4/IPv6 addresses, CIDR ranges and the names `loopback`, `linklocal` and
 * `uniquelocal` (what Express's `trust proxy` accepts), matched with Node's BlockList.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Express, RequestHandler } from 'express';

export const GATEWAY_PROOF_HEADER = 'x-gateway-proof';

/** The forwarding rule every process applies, read from the environment by loadConfig. */
export interface ForwardedTrust {
  /** `GATEWAY_ADDRESSES`: where the gateway connects to services from. */
  gatewayAddresses: string[];
  /** `TRUST_PROXY`: the proxies in front of the gateway whose X-Forwarded-For it keeps. */
  frontProxies: string[];
  /** What the gateway sends in X-Gateway-Proof (derived from INTERNAL_API_KEY). */
  proof: string;
}

const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** An address list as a matcher; a bad entry is thrown as an Error naming it. */
const MATCHER_CACHE_SIZE = 1024;

export function addressMatcher(entries: readonly string[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const entry of entries.flatMap((name) => NAMED_RANGES[name] ?? [name])) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address);
    const prefix = bits === undefined ? undefined : Number(bits);
    const maxPrefix = family === 6 ? 128 : 32;
    if (family === 0 || extra !== undefined || (prefix !== undefined && (!Number.isInteger(prefix) || prefix < 0 || prefix > maxPrefix || bits === ''))) {
      throw new Error(`"${entry}" is not an address, a CIDR range, loopback, linklocal or uniquelocal`);
    }
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, prefix, type);
  }
  if (entries.length === 0) return () => false;
  // Asked for every request with the peer's address, which repeats: answers are kept per address
  // (a bounded table, emptied when full), since each check builds a SocketAddress.
  const answers = new Map<string, boolean>();
  return (address) => {
    if (!address) return false;
    const known = answers.get(address);
    if (known !== undefined) return known;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    const plain = mapped ?? address;
    const family = isIP(plain);
    const matches = family !== 0 && list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
    if (answers.size >= MATCHER_CACHE_SIZE) answers.clear();
    answers.set(address, matches);
    return matches;
  };
}

/** The proof only holders of INTERNAL_API_KEY can make. */
export function gatewayProof(internalApiKey: string): string {
  return createHmac('sha256', internalApiKey).update('bookstore gateway: forwarded headers').digest('base64url');
}

const FORWARDED_HEADERS = ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'forwarded'];

function sameProof(given: string | string[] | undefined, expected: Buffer): boolean {
  if (typeof given !== 'string') return false;
  const bytes = Buffer.from(given);
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

/**
 * A service's side: Express's `trust proxy` believes the gateway (first hop) and then the proxies
 * in front of it, and the returned middleware (put first) drops forwarded headers that did not come
 * from the gateway with its proof. Without a rule, no forwarded header is believed.
 */
export function trustGatewayOnly(app: Express, trust: ForwardedTrust | undefined): RequestHandler {
  if (!trust) {
    app.set('trust proxy', false);
    return (req, _res, next) => {
      for (const name of [...FORWARDED_HEADERS, GATEWAY_PROOF_HEADER]) delete req.headers[name];
      next();
    };
  }
  const gateway = addressMatcher(trust.gatewayAddresses);
  const front = addressMatcher(trust.frontProxies);
  const proof = Buffer.from(trust.proof);
  app.set('trust proxy', (address: string, hop: number) => (hop === 0 ? gateway(address) : front(address)));
  return (req, _res, next) => {
    const fromGateway = gateway(req.socket.remoteAddress) && sameProof(req.headers[GATEWAY_PROOF_HEADER], proof);
    delete req.headers[GATEWAY_PROOF_HEADER];
    if (!fromGateway) for (const name of FORWARDED_HEADERS) delete req.headers[name];
    next();
  };
}

export interface GatewayForwarding {
  /** The `trust proxy` of the gateway's own app: the proxies in front of it. */
  trustProxy: (address: string) => boolean;
  /**
   * The headers the gateway sends a service for `req`: X-Forwarded-For as the rule above says,
   * X-Forwarded-Proto and -Host as Express's `req.protocol` and `req.host` resolve them with the
   * same trust (the first value a trusted front proxy forwarded, else the connection's and Host),
   * and the proof. Works on the bare request, so the REST proxy can answer before Express.
   */
  headers: (req: IncomingMessage) => Record<string, string>;
}

/** The first of a forwarded header's comma-separated values, if any. */
function firstForwarded(value: string | string[] | undefined): string | undefined {
  const first = (Array.isArray(value) ? value[0] : value)?.split(',', 1)[0].trim();
  return first === '' ? undefined : first;
}

/** The gateway's side of the rule. */
export function gatewayForwarding(trust: ForwardedTrust): GatewayForwarding {
  const front = addressMatcher(trust.frontProxies);
  return {
    trustProxy: (address) => front(address),
    headers(req) {
      const peer = req.socket.remoteAddress ?? '';
      const trusted = front(peer);
      const incoming = req.headers['x-forwarded-for'];
      const chain = trusted && typeof incoming === 'string' && incoming.trim() !== '' ? `${incoming}, ${peer}` : peer;
      const ownProtocol = (req.socket as TLSSocket).encrypted ? 'https' : 'http';
      return {
        'x-forwarded-for': chain,
        'x-forwarded-proto': (trusted ? firstForwarded(req.headers['x-forwarded-proto']) : undefined) ?? ownProtocol,
        'x-forwarded-host': (trusted ? firstForwarded(req.headers['x-forwarded-host']) : undefined) ?? req.headers.host ?? '',
        [GATEWAY_PROOF_HEADER]: trust.proof,
      };
    },
  };
}
