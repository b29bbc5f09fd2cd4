/** Access tokens (RS256 JWTs) and refresh tokens (256 random bits, stored as SHA-256 hashes). */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Role } from '../../rest-compat/auth';
import type { SigningKey } from './keys';

export interface TokenSettings {
  issuer: string;
  audience: string;
  accessTokenTtlMs: number;
}

export async function signAccessToken(key: SigningKey, settings: TokenSettings, subject: { userId: string; role: Role; email: string }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ role: subject.role, email: subject.email })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
    .setSubject(subject.userId)
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + Math.floor(settings.accessTokenTtlMs / 1000))
    .setJti(randomUUID())
    .sign(key.privateKey);
}

export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
