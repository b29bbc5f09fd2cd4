/** Access tokens (RS256 JWTs signed with jsonwebtoken) and refresh tokens (256 random bits, stored as SHA-256 hashes). */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Role } from '../../platform/auth';
import type { SigningKey } from './keys';

export interface TokenSettings {
  issuer: string;
  audience: string;
  accessTokenTtlMs: number;
}

export function signAccessToken(key: SigningKey, settings: TokenSettings, subject: { userId: string; role: Role; email: string; sessionId: string }): string {
  return jwt.sign({ role: subject.role, email: subject.email, sid: subject.sessionId }, key.privateKey, {
    algorithm: 'RS256',
    keyid: key.kid,
    subject: subject.userId,
    issuer: settings.issuer,
    audience: settings.audience,
    expiresIn: Math.floor(settings.accessTokenTtlMs / 1000),
    jwtid: randomUUID(),
  });
}

export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
