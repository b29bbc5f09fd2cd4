import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import request from 'supertest';
import { adminSession, expectEnvelope, registeredUser, startStack, type Stack } from '../../test/harness';
import {
  claimsOf,
  genuineClaims,
  nowSeconds as now,
  publishedKey,
  signHs256 as hs256,
  signingKey,
  signJwt,
  tampered,
  unsignedJwt,
  type Claims as JWTPayload,
} from '../../test/jwt';

let stack: Stack;
let realKey: KeyObject;
let kid: string;
let publicPem: string;
let publicModulus: string;
let victim: Awaited<ReturnType<typeof registeredUser>>;
let admin: Awaited<ReturnType<typeof adminSession>>;

beforeAll(async () => {
  stack = await startStack();
  realKey = signingKey(stack.config.jwt.privateKeyFile);
  ({ kid, publicPem, modulus: publicModulus } = publishedKey((await request(stack.urls.auth).get('/auth/.well-known/jwks.json')).body));
  victim = await registeredUser(stack);
  admin = await adminSession(stack);
});
afterAll(async () => {
  await stack?.stop();
});

const users = () => request(stack.urls.user);
const auth = () => request(stack.urls.auth);
const AUTHENTICATION_REQUIRED = 'Authentication is required to access this resource';

/** Claims a genuine access token of `victim` (or of the admin, for ADMIN) would carry. */
const claims = (role: 'USER' | 'ADMIN', overrides: JWTPayload = {}): JWTPayload => genuineClaims(stack.config.jwt, role === 'ADMIN' ? admin : victim, role, overrides);

async function signRs256(payload: JWTPayload, key: KeyObject = realKey): Promise<string> {
  return signJwt(payload, key, { kid });
}

const signHs256 = (payload: JWTPayload, secret: string) => hs256(payload, secret, { kid });

const otherKey = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

/** Each attack yields the Authorization header to send; every one must be refused with 401. */
const attacks: [string, () => Promise<string> | string][] = [
  ['an unsigned token (alg: none)', () => `Bearer ${unsignedJwt('none', claims('ADMIN'))}`],
  ['an HS256 token keyed with the public key PEM', () => `Bearer ${signHs256(claims('ADMIN'), publicPem)}`],
  ['an HS256 token keyed with the public JWK modulus', () => `Bearer ${signHs256(claims('ADMIN'), publicModulus)}`],
  ['an expired token signed by the real key', async () => `Bearer ${await signRs256(claims('USER', { iat: now() - 1800, exp: now() - 900 }))}`],
  ['a token signed by another RSA key under the real kid', async () => `Bearer ${await signRs256(claims('USER'), otherKey())}`],
  [
    'a genuine token whose payload was changed from USER to ADMIN',
    () => {
      expect(claimsOf(victim.tokens.accessToken).role).toBe('USER');
      return `Bearer ${tampered(victim.tokens.accessToken, { role: 'ADMIN' })}`;
    },
  ],
  ['a token from another issuer', async () => `Bearer ${await signRs256(claims('USER', { iss: 'evil-issuer' }))}`],
  ['a token for another audience', async () => `Bearer ${await signRs256(claims('USER', { aud: 'another-service' }))}`],
  ['a token without an expiry', async () => `Bearer ${await signRs256(claims('USER', { exp: undefined }))}`],
  ['a token with an unknown role', async () => `Bearer ${await signRs256(claims('USER', { role: 'SUPERUSER' }))}`],
  ['a garbage string', () => 'Bearer this-is-not-a-jwt'],
  ['three garbage segments', () => 'Bearer abc.def.ghi'],
  ['the Basic scheme', () => `Basic ${Buffer.from(`${victim.email}:${victim.password}`).toString('base64')}`],
  ['a genuine token under the Basic scheme', () => `Basic ${victim.tokens.accessToken}`],
  ['an empty bearer', () => 'Bearer '],
];

describe('a protected route (GET /api/user/{id})', () => {
  it.each(attacks)('answers 401 for %s', async (_name, authorization) => {
    const res = await users()
      .get(`/api/user/${victim.userId}`)
      .set('Authorization', await authorization());
    expectEnvelope(res, 401, AUTHENTICATION_REQUIRED);
  });

  it('answers 200 for the genuine token, so the 401s above are about the token', async () => {
    const res = await users().get(`/api/user/${victim.userId}`).set('Authorization', victim.bearer);
    expect(res.status).toBe(200);
    expect(res.body.userId).toBe(victim.userId);
  });
});

describe('POST /auth/logout-all', () => {
  it.each(attacks)('answers 401 for %s, revoking nothing', async (_name, authorization) => {
    const res = await auth()
      .post('/auth/logout-all')
      .set('Authorization', await authorization());
    expectEnvelope(res, 401, AUTHENTICATION_REQUIRED);
  });

  it("keeps the victim's and the admin's sessions alive after every attack, and the genuine token then revokes them", async () => {
    const adminRefreshed = await auth().post('/auth/refresh').send({ refreshToken: admin.tokens.refreshToken });
    expect(adminRefreshed.status).toBe(200);
    const refreshed = await auth().post('/auth/refresh').send({ refreshToken: victim.tokens.refreshToken });
    expect(refreshed.status).toBe(200);
    const res = await auth().post('/auth/logout-all').set('Authorization', victim.bearer);
    expect(res.status).toBe(204);
    expectEnvelope(await auth().post('/auth/refresh').send({ refreshToken: refreshed.body.refreshToken }), 401);
  });
});

describe('admin access', () => {
  it('refuses an ADMIN claim forged with another key on an admin route', async () => {
    const forged = `Bearer ${await signRs256(claims('ADMIN'), otherKey())}`;
    expectEnvelope(await users().get('/api/user/').set('Authorization', forged), 401, AUTHENTICATION_REQUIRED);
    expectEnvelope(await users().get('/api/user/search').query({ keyword: 'a' }).set('Authorization', forged), 401, AUTHENTICATION_REQUIRED);
  });

  it('refuses a forged ADMIN delete, and the profile remains', async () => {
    const target = await registeredUser(stack);
    const forged = `Bearer ${await signRs256(claims('ADMIN'), otherKey())}`;
    expectEnvelope(await users().delete(`/api/user/${target.userId}`).set('Authorization', forged), 401, AUTHENTICATION_REQUIRED);
    const stillThere = await users().get(`/api/user/${target.userId}`).set('Authorization', admin.bearer);
    expect(stillThere.status).toBe(200);
  });

  it('refuses the tampered USER→ADMIN token on an admin route, where the untampered one gets 403', async () => {
    const forged = tampered(victim.tokens.accessToken, { role: 'ADMIN' });
    expectEnvelope(await users().get('/api/user/').set('Authorization', `Bearer ${forged}`), 401, AUTHENTICATION_REQUIRED);
    const fresh = await registeredUser(stack);
    expectEnvelope(await users().get('/api/user/').set('Authorization', fresh.bearer), 403);
  });

  it('grants admin access to an ADMIN token signed by the real key', async () => {
    const genuine = `Bearer ${await signRs256(claims('ADMIN'))}`;
    const res = await users().get('/api/user/').set('Authorization', genuine);
    expect(res.status).toBe(200);
    expect((res.body as { userId: string }[]).map((p) => p.userId)).toEqual(expect.arrayContaining([admin.userId, victim.userId]));
  });
});
