/**
 * The RS256 signing key: read from JWT_PRIVATE_KEY_FILE, or generated there on first start (PKCS#8
 * PEM, mode 0600). Its public half is published as a JWKS for every other service, and so is the
 * previous key's (JWT_PREVIOUS_PUBLIC_KEY_FILE) during a rotation, so tokens it signed stay valid
 * until they expire.
 *
 * Rotating: move the private key aside, keep its public half (`openssl pkey -pubout`), point
 * JWT_PREVIOUS_PUBLIC_KEY_FILE at it and restart with a new (or no) JWT_PRIVATE_KEY_FILE; after one
 * access-token lifetime (15 minutes) the variable can go.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JsonWebKeySet, PublishedJwk } from '../../platform/auth';

export interface SigningKey {
  privateKey: KeyObject;
  kid: string;
  jwks: JsonWebKeySet;
}

/** A public key as the JWKS publishes it, its kid derived from the key itself. */
export function publishedJwk(publicKey: KeyObject): PublishedJwk {
  const jwk = publicKey.export({ format: 'jwk' });
  if (jwk.kty !== 'RSA') throw new Error('JWT signing keys must be RSA keys');
  const kid = createHash('sha256').update(`${jwk.n}.${jwk.e}`).digest('base64url').slice(0, 16);
  return { kty: 'RSA', n: jwk.n, e: jwk.e, kid, alg: 'RS256', use: 'sig' };
}

/** The previous key's public half (a PEM public key, or its private key, from which the public half is taken). */
function readPublicKey(file: string): KeyObject {
  try {
    return createPublicKey(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`JWT_PREVIOUS_PUBLIC_KEY_FILE: no RSA key could be read from ${file} (${(error as Error).message})`);
  }
}

export function loadOrCreateSigningKey(file: string, previousPublicKeyFile?: string): SigningKey {
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
  const current = publishedJwk(createPublicKey(privateKey));
  const keys = [current];
  if (previousPublicKeyFile) {
    const previous = publishedJwk(readPublicKey(previousPublicKeyFile));
    if (previous.kid !== current.kid) keys.push(previous);
  }
  return { privateKey, kid: current.kid, jwks: { keys } };
}
