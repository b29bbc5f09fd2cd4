/**
 * Bearer-token authentication for every service: RS256 access tokens verified against the auth
 * service's JWKS, plus the role, ownership and internal-key rules shared by REST and GraphQL.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { RequestHandler, Request } from 'express';
import { createLocalJWKSet, createRemoteJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { AppError, forbidden, serviceUnavailable, unauthenticated } from './errors';

export type Role = 'USER' | 'ADMIN';
export const ROLES: readonly Role[] = ['USER', 'ADMIN'];

export interface Principal {
  userId: string;
  role: Role;
  email: string;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
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
}

export interface VerifierOptions {
  issuer: string;
  audience: string;
}

class JwtVerifier implements TokenVerifier {
  constructor(
    private readonly keys: JWTVerifyGetKey,
    private readonly options: VerifierOptions,
  ) {}

  async verify(token: string): Promise<Principal> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.keys, {
        algorithms: ['RS256'],
        issuer: this.options.issuer,
        audience: this.options.audience,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch (error) {
      if (error instanceof joseErrors.JWKSTimeout || !(error instanceof joseErrors.JOSEError)) {
        throw serviceUnavailable('Authentication service is unavailable', 'AUTH_UNAVAILABLE');
      }
      throw unauthenticated();
    }
    const role = payload.role;
    if (typeof payload.sub !== 'string' || !ROLES.includes(role as Role)) throw unauthenticated();
    return { userId: payload.sub, role: role as Role, email: typeof payload.email === 'string' ? payload.email : '' };
  }
}

/**
 * Verifies against the auth service's published key set, fetched and cached over HTTP. The URL is
 * read at the first verification, so a service may be built before the auth service's address is known.
 */
export function remoteJwksVerifier(jwksUrl: () => string, options: VerifierOptions): TokenVerifier {
  let keys: JWTVerifyGetKey | undefined;
  const lazyKeys: JWTVerifyGetKey = (header, token) => {
    keys ??= createRemoteJWKSet(new URL(jwksUrl()), { timeoutDuration: 3000, cooldownDuration: 30_000, cacheMaxAge: 600_000 });
    return keys(header, token);
  };
  return new JwtVerifier(lazyKeys, options);
}

/** The verifier every service but auth uses: the auth service's JWKS at `config.urls.auth`. */
export function jwksVerifierFor(config: { urls: { auth: string }; jwt: VerifierOptions }): TokenVerifier {
  return remoteJwksVerifier(() => `${config.urls.auth}/auth/.well-known/jwks.json`, { issuer: config.jwt.issuer, audience: config.jwt.audience });
}

/** Verifies against a key set held in memory (the auth service itself). */
export function localJwksVerifier(jwks: JSONWebKeySet, options: VerifierOptions): TokenVerifier {
  return new JwtVerifier(createLocalJWKSet(jwks), options);
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
