/**
 * Signing-key rotation (issue 15): the auth service signs with its new key and publishes the previous
 * public key (JWT_PREVIOUS_PUBLIC_KEY_FILE) beside it, so access tokens the old key signed stay valid
 * in every service until they expire, while a key that is not published stays refused.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import request from 'supertest';
import { publishedJwk } from '../../subgraphs/auth/keys';
import { expectEnvelope, registeredUser, startStack, type Stack } from '../harness';
import { claimsOf, headerOf, nowSeconds, signJwt } from '../jwt';

let stack: Stack;
let keysDir: string;
let previous: KeyObject;
let previousKid: string;
let user: Awaited<ReturnType<typeof registeredUser>>;

beforeAll(async () => {
  keysDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bookstore-rotation-'));
  const old = generateKeyPairSync('rsa', { modulusLength: 2048 });
  previous = old.privateKey;
  previousKid = publishedJwk(old.publicKey).kid;
  fs.writeFileSync(path.join(keysDir, 'previous-public.pem'), old.publicKey.export({ type: 'spki', format: 'pem' }));
  stack = await startStack({ env: { JWT_PRIVATE_KEY_FILE: path.join(keysDir, 'current.pem'), JWT_PREVIOUS_PUBLIC_KEY_FILE: path.join(keysDir, 'previous-public.pem') } });
  user = await registeredUser(stack);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(keysDir, { recursive: true, force: true });
});

/** The claims the auth service put in `user`'s token, re-signed by `key` under `kid` with a fresh lifetime. */
function resigned(key: KeyObject, kid: string, lifetime: { iat: number; exp: number } = { iat: nowSeconds(), exp: nowSeconds() + 900 }): string {
  return `Bearer ${signJwt({ ...claimsOf(user.tokens.accessToken), ...lifetime, jti: randomUUID() }, key, { kid })}`;
}

const profile = (authorization: string) => request(stack.urls.user).get(`/api/user/${user.userId}`).set('Authorization', authorization);

describe('after a signing-key rotation', () => {
  it('the JWKS publishes the current key and the previous one; new tokens are signed by the current one', async () => {
    const jwks = await request(stack.urls.auth).get('/auth/.well-known/jwks.json');
    const kids = (jwks.body.keys as { kid: string }[]).map((key) => key.kid);
    expect(kids).toHaveLength(2);
    expect(kids[1]).toBe(previousKid);
    expect(headerOf(user.tokens.accessToken)).toMatchObject({ alg: 'RS256', kid: kids[0] });
  });

  it('a token the previous key signed is still accepted by another service, and by the auth service itself', async () => {
    const old = resigned(previous, previousKid);
    expect((await profile(old)).status).toBe(200);
    expect((await request(stack.urls.auth).get('/auth/sessions').set('Authorization', old)).status).toBe(200);
  });

  it('once expired, a token of the previous key is refused like any other', async () => {
    expectEnvelope(await profile(resigned(previous, previousKid, { iat: nowSeconds() - 1000, exp: nowSeconds() - 60 })), 401);
  });

  it('a key that is not published is refused, under the previous kid or a kid of its own', async () => {
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    expectEnvelope(await profile(resigned(stranger, previousKid)), 401);
    expectEnvelope(await profile(resigned(stranger, 'rotated-in-next')), 401);
    // The unknown kid did not break the cache: the genuine keys still verify.
    expect((await profile(user.bearer)).status).toBe(200);
    expect((await profile(resigned(previous, previousKid))).status).toBe(200);
  });
});
