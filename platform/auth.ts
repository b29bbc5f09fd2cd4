/**
 * Bearer-token authentication for every service: RS256 access tokens verified with `jsonwebtoken`
 * against the auth service's JWKS (only RS256, issuer, audience, a small clock tolerance, a known
 * kid), refused once their session was revoked, plus the role, ownership and internal-key rules
 * shared by REST and GraphQL.
 */
import { timingSafeEqual, createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { RequestHandler, Request } from 'express';
import jwt from 'jsonwebtoken';
import type { EventBus, Subscription } from './events/bus';
import type { Logger } from './logger';
import { AppError, forbidden, serviceUnavailable, unauthenticated } from './errors';
import { RevocationFeed, RevokedSessions } from './revocations';

export type Role = 'USER' | 'ADMIN';
export const ROLES: readonly Role[] = ['USER', 'ADMIN'];

export interface Principal {
  userId: string;
  role: Role;
  email: string;
  /** The `email_verified` claim: the owner proved the address theirs when the token was issued (tokens issued before the claim existed: false). */
  emailVerified: boolean;
  /** The session (`sid`) the token belongs to. */
  sessionId: string;
}

declare global {
  namespace Express {
    interface Request {
      principal?: Principal;
      requestId: string;
    }
  }
}

export interface TokenVerifier {
  /** Resolves the token's principal; rejects with a 401 AppError, or 503 when the JWKS cannot be had. */
  verify(token: string): Promise<Principal>;
  /** Starts following session revocations (`sessions-revoked`); the service stops the subscription. */
  follow?(): Promise<Subscription>;
}

export interface VerifierOptions {
  issuer: string;
  audience: string;
  /** Seconds of clock difference between the auth service and this one that `exp`, `iat` and `nbf` forgive. */
  clockToleranceSec: number;
}

/** A published JSON Web Key as the JWKS carries it. */
export interface PublishedJwk extends JsonWebKey {
  kid: string;
  alg: 'RS256';
  use: 'sig';
}

export interface JsonWebKeySet {
  keys: PublishedJwk[];
}

/** Where a verifier finds the public key a token's `kid` names. */
interface KeySource {
  /** The key, or undefined for a kid the auth service does not publish; rejects when the JWKS cannot be had. */
  key(kid: string): Promise<KeyObject | undefined>;
}

/** Public keys by kid; keys that are not RSA signing keys are left out. */
function keysOf(jwks: unknown): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  const list = (jwks as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) throw new Error('the JWKS has no keys array');
  for (const jwk of list as Partial<PublishedJwk>[]) {
    if (jwk?.kty !== 'RSA' || typeof jwk.kid !== 'string' || (jwk.alg !== undefined && jwk.alg !== 'RS256') || (jwk.use !== undefined && jwk.use !== 'sig')) continue;
    keys.set(jwk.kid, createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' }));
  }
  return keys;
}

class LocalKeys implements KeySource {
  private readonly keys: Map<string, KeyObject>;

  constructor(jwks: JsonWebKeySet) {
    this.keys = keysOf(jwks);
  }

  async key(kid: string): Promise<KeyObject | undefined> {
    return this.keys.get(kid);
  }
}

export const JWKS_REFETCH_COOLDOWN_MS = 30_000;
const JWKS_TIMEOUT_MS = 3000;
/** Keys are refetched this long after the last fetch, so a retired key leaves the cache. */
const JWKS_MAX_AGE_MS = 600_000;

/**
 * The auth service's JWKS fetched over HTTP and cached. An unknown kid (a rotated-in key) fetches it
 * again, at most once per 30 s, so forged kids cannot make this service hammer the auth service.
 */
class RemoteKeys implements KeySource {
  private keys: Map<string, KeyObject> | undefined;
  private fetchedAt = 0;
  /** When a kid the cache lacked last caused a fetch. */
  private unknownKidFetchAt = -Infinity;
  private pending: Promise<void> | undefined;

  constructor(private readonly url: () => string) {}

  async key(kid: string): Promise<KeyObject | undefined> {
    const now = Date.now();
    if (!this.keys || now - this.fetchedAt >= JWKS_MAX_AGE_MS) {
      await this.refresh();
    } else if (!this.keys.has(kid) && now - this.unknownKidFetchAt >= JWKS_REFETCH_COOLDOWN_MS) {
      this.unknownKidFetchAt = now;
      await this.refresh();
    }
    return this.keys?.get(kid);
  }

  /** One fetch at a time. Without keys yet, a failed fetch is the auth service's outage (503); with keys, they stay. */
  private async refresh(): Promise<void> {
    this.pending ??= this.fetch().finally(() => {
      this.pending = undefined;
    });
    try {
      await this.pending;
    } catch {
      if (!this.keys) throw serviceUnavailable('Authentication service is unavailable', 'AUTH_UNAVAILABLE');
    }
  }

  private async fetch(): Promise<void> {
    this.fetchedAt = Date.now();
    const res = await this.request();
    if (!res.ok) throw new Error(`the JWKS answered ${res.status}`);
    this.keys = keysOf(await res.json());
  }

  /**
   * The JWKS request, sent again once on a fresh connection when the first attempt fails before any
   * answer (fetch's TypeError, compared by name: it comes from Node's own realm): a kept-alive
   * connection that the auth service closed as idle just as the request went out fails that way. A
   * timeout is not retried.
   */
  private async request(): Promise<Response> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await fetch(this.url(), { signal: AbortSignal.timeout(JWKS_TIMEOUT_MS), headers: { accept: 'application/json' } });
      } catch (error) {
        if (attempt > 1 || (error as Error | undefined)?.name !== 'TypeError') throw error;
      }
    }
  }
}

/** Says whether the session of a verified token was ended; such a token is refused like a forged one. */
export type RevocationCheck = (principal: Principal, issuedAtMs: number) => boolean | Promise<boolean>;

const SIGNING_ALGORITHM = 'RS256';

class JwtVerifier implements TokenVerifier {
  constructor(
    private readonly keys: KeySource,
    private readonly options: VerifierOptions,
    private readonly revoked: RevocationCheck,
    readonly follow?: () => Promise<Subscription>,
  ) {}

  async verify(token: string): Promise<Principal> {
    const decoded = jwt.decode(token, { complete: true });
    const header = decoded?.header;
    // jsonwebtoken ignores `crit`; RFC 7515 says a token with critical extensions we do not know is invalid.
    if (!header || header.alg !== SIGNING_ALGORITHM || typeof header.kid !== 'string' || header.crit !== undefined) throw unauthenticated();
    const key = await this.keys.key(header.kid);
    if (!key) throw unauthenticated();
    let payload: jwt.JwtPayload;
    try {
      const verified = jwt.verify(token, key, {
        algorithms: [SIGNING_ALGORITHM],
        issuer: this.options.issuer,
        audience: this.options.audience,
        clockTolerance: this.options.clockToleranceSec,
      });
      if (typeof verified === 'string') throw unauthenticated();
      payload = verified;
    } catch {
      throw unauthenticated();
    }
    const { sub, role, email, email_verified: emailVerified, sid, exp, iat } = payload;
    if (typeof sub !== 'string' || typeof sid !== 'string' || typeof exp !== 'number' || typeof iat !== 'number' || !ROLES.includes(role as Role)) throw unauthenticated();
    const principal: Principal = { userId: sub, role: role as Role, email: typeof email === 'string' ? email : '', emailVerified: emailVerified === true, sessionId: sid };
    if (await this.revoked(principal, iat * 1000)) throw unauthenticated();
    return principal;
  }
}

export interface FollowOptions {
  bus: EventBus;
  logger: Logger;
  /** Names this verifier's consumer group (`token-verifier.<service>.<instance>`). */
  service: string;
}

/**
 * The verifier every service but auth uses: the auth service's JWKS at `config.urls.auth` (read at
 * the first verification, so a service may be built before the auth service's address is known),
 * and, given a bus, the revoked sessions (see revocations.ts), kept until their tokens would have
 * expired anyway.
 */
export function jwksVerifierFor(
  config: { urls: { auth: string }; internalApiKey: string; jwt: VerifierOptions & { accessTokenTtlMs: number } },
  follow: FollowOptions | undefined,
): TokenVerifier {
  const revoked = new RevokedSessions(config.jwt.accessTokenTtlMs + config.jwt.clockToleranceSec * 1000);
  const keys = new RemoteKeys(() => `${config.urls.auth}/auth/.well-known/jwks.json`);
  if (!follow) return new JwtVerifier(keys, config.jwt, (principal, issuedAtMs) => revoked.has(principal, issuedAtMs));
  const feed = new RevocationFeed(revoked, {
    ...follow,
    listUrl: () => `${config.urls.auth}/auth/internal/revoked-sessions`,
    internalApiKey: config.internalApiKey,
  });
  return new JwtVerifier(
    keys,
    config.jwt,
    (principal, issuedAtMs) => feed.has(principal, issuedAtMs),
    () => feed.follow(),
  );
}

/** Verifies against a key set held in memory (the auth service itself, which asks its own database about sessions). */
export function localJwksVerifier(jwks: JsonWebKeySet, options: VerifierOptions, revoked: RevocationCheck): TokenVerifier {
  return new JwtVerifier(new LocalKeys(jwks), options, revoked);
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}

/** Requires a valid bearer token and puts its principal on the request. */
export function authenticate(verifier: TokenVerifier): RequestHandler {
  return async (req, _res, next) => {
    const token = bearerToken(req.headers.authorization);
    if (!token) throw unauthenticated();
    req.principal = await verifier.verify(token);
    next();
  };
}

export function principalOf(req: Request): Principal {
  if (!req.principal) throw unauthenticated();
  return req.principal;
}

export function assertRole(principal: Principal, role: Role, message?: string): void {
  if (principal.role !== role) throw forbidden(message);
}

export function requireRole(role: Role, message?: string): RequestHandler {
  return (req, _res, next) => {
    assertRole(principalOf(req), role, message);
    next();
  };
}

/** ADMIN, or the caller whose JWT subject is `userId`. */
export function isSelfOrAdmin(principal: Principal, userId: string): boolean {
  return principal.role === 'ADMIN' || principal.userId === userId;
}

export function assertSelfOrAdmin(principal: Principal, userId: string): void {
  if (!isSelfOrAdmin(principal, userId)) throw forbidden();
}

const digest = (value: string) => createHash('sha256').update(value).digest();

export function internalKeyMatches(presented: string | undefined, expected: string): boolean {
  // Comparing digests keeps the comparison constant-time whatever the presented length.
  return presented !== undefined && timingSafeEqual(digest(presented), digest(expected));
}

export const INTERNAL_KEY_HEADER = 'x-internal-api-key';

/** Internal routes: the `X-Internal-Api-Key` header must equal the configured key (401 otherwise). */
export function requireInternalKey(expected: string): RequestHandler {
  return (req, _res, next) => {
    const presented = req.headers[INTERNAL_KEY_HEADER];
    if (!internalKeyMatches(typeof presented === 'string' ? presented : undefined, expected)) {
      throw new AppError('INVALID_INTERNAL_KEY', 'A valid internal API key is required', 401);
    }
    next();
  };
}
