/**
 * Hand-made JWTs for the forged-token tests: any algorithm, any header, any payload, signed (or not)
 * with node:crypto directly, so no JWT library's own checks decide what an attacker can send.
 */
import fs from 'node:fs';
import { createHmac, createPrivateKey, createPublicKey, createSign, randomUUID, sign as cryptoSign, constants, type JsonWebKey, type KeyObject } from 'node:crypto';

export type Claims = Record<string, unknown>;

export const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The claims of a token, read without checking anything. */
export function claimsOf(token: string): Claims {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as Claims;
}

/** RS256, RS512 or PS256 over exactly this header (alg added unless given) and payload; undefined claims are left out. */
export function signJwt(payload: Claims, key: KeyObject, header: Record<string, unknown> = {}, alg = 'RS256'): string {
  const input = `${b64({ alg, typ: 'JWT', ...header })}.${b64(payload)}`;
  const bits = alg.slice(2);
  const signature = alg.startsWith('PS')
    ? cryptoSign(`sha${bits}`, Buffer.from(input), { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(bits) / 8 })
    : createSign(`RSA-SHA${bits}`).update(input).sign(key);
  return `${input}.${signature.toString('base64url')}`;
}

/** HS256 keyed with `secret`: the key-confusion attack against a verifier that trusts the header's alg. */
export function signHs256(payload: Claims, secret: string, header: Record<string, unknown> = {}): string {
  const input = `${b64({ alg: 'HS256', typ: 'JWT', ...header })}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

export function unsignedJwt(alg: string, payload: Claims): string {
  return `${b64({ alg, typ: 'JWT' })}.${b64(payload)}.`;
}

/** The header of a token, read without checking anything. */
export function headerOf(token: string): Claims {
  return JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()) as Claims;
}

/** A genuine token with some claims changed and its signature kept: what a tampering client sends. */
export function tampered(token: string, changes: Claims): string {
  const [header, , signature] = token.split('.');
  return `${header}.${b64({ ...claimsOf(token), ...changes })}.${signature}`;
}

/** The auth service's signing key, read from its key file, to sign tokens it would accept. */
export function signingKey(privateKeyFile: string): KeyObject {
  return createPrivateKey(fs.readFileSync(privateKeyFile, 'utf8'));
}

/** The first key of a JWKS document: its kid, and the public key as PEM and as its bare modulus (key-confusion secrets). */
export function publishedKey(jwks: { keys: JsonWebKey[] }): { kid: string; publicPem: string; modulus: string } {
  const jwk = jwks.keys[0] as JsonWebKey & { kid: string; n: string };
  return { kid: jwk.kid, publicPem: createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString(), modulus: jwk.n };
}

/** Who a token names: a registered user, or an admin session with the admin's email. */
export interface TokenHolder {
  userId: string;
  email: string;
  tokens: { accessToken: string };
}

/**
 * The claims a genuine access token of `holder` would carry with `role`, fresh and unique, under the
 * holder's live session: a forgery built from them is refused for its own flaw only.
 */
export function genuineClaims(jwt: { issuer: string; audience: string }, holder: TokenHolder, role: 'USER' | 'ADMIN', overrides: Claims = {}): Claims {
  return {
    sub: holder.userId,
    role,
    email: holder.email,
    iss: jwt.issuer,
    aud: jwt.audience,
    iat: nowSeconds(),
    exp: nowSeconds() + 900,
    jti: randomUUID(),
    sid: claimsOf(holder.tokens.accessToken).sid,
    ...overrides,
  };
}
