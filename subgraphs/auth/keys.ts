/**
 * The RS256 signing key: read from JWT_PRIVATE_KEY_FILE, or generated there on first start (PKCS#8
 * PEM, mode 0600). Its public half is published as a JWKS for every other service.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';

export interface SigningKey {
  privateKey: KeyObject;
  kid: string;
  jwks: JSONWebKeySet;
}

export function loadOrCreateSigningKey(file: string): SigningKey {
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
    // `wx` keeps a concurrent first start from overwriting a key another process already wrote.
    try {
      fs.writeFileSync(file, pem, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const privateKey = createPrivateKey(fs.readFileSync(file, 'utf8'));
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const kid = createHash('sha256').update(`${publicJwk.n}.${publicJwk.e}`).digest('base64url').slice(0, 16);
  return { privateKey, kid, jwks: { keys: [{ kty: 'RSA', n: publicJwk.n, e: publicJwk.e, kid, alg: 'RS256', use: 'sig' }] } };
}
