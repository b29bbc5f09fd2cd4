/**
 * Access tokens (RS256 JWTs signed with jsonwebtoken) and the secret tokens (256 random bits, stored
 * as SHA-256 hashes): refresh tokens and the single-use tokens sent by e-mail.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Role } from '../../platform/auth';
import type { SigningKey } from './keys';

export interface TokenSettings {
  issuer: string;
  audience: string;
  accessTokenTtlMs: number;
}

export interface TokenSubject {
  userId: string;
  role: Role;
  email: string;
  /** Whether the owner verified the address (the `email_verified` claim, as OpenID Connect names it). */
  emailVerified: boolean;
  sessionId: string;
}

export function signAccessToken(key: SigningKey, settings: TokenSettings, subject: TokenSubject): string {
  return jwt.sign({ role: subject.role, email: subject.email, email_verified: subject.emailVerified, sid: subject.sessionId }, key.privateKey, {
    algorithm: 'RS256',
    keyid: key.kid,
    subject: subject.userId,
    issuer: settings.issuer,
    audience: settings.audience,
    expiresIn: Math.floor(settings.accessTokenTtlMs / 1000),
    jwtid: randomUUID(),
  });
}

export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
