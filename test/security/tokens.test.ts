/**
 * Forged, stale and stolen credentials through the gateway (issue 8, item 4). The auth service's own
 * tests (subgraphs/auth/tokens.test.ts) try forgeries against one route of one service; here every
 * protected route family, REST and GraphQL, gets each forgery through the gateway, plus the tricks
 * those tests leave out (other RS/PS algorithms with the real key, key material in the header, kid
 * tricks, nbf, crit), a token whose user was deleted, and refresh-token reuse through the gateway.
 */
import fs from 'node:fs';
import { createHmac, createPrivateKey, createPublicKey, createSign, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { exportJWK, SignJWT, type JWTPayload } from 'jose';
import { createBook, type CatalogueBook } from '../commerce';
import { adminSession, registeredUser, waitFor } from '../harness';
import { expectEnvelope, send, startSystem, type Answer, type System } from '../hostile';

let system: System;
let realKey: KeyObject;
let kid: string;
let publicPem: string;
let jwksText: string;
let admin: Awaited<ReturnType<typeof adminSession>>;
let victim: Awaited<ReturnType<typeof registeredUser>>;
let book: CatalogueBook;

beforeAll(async () => {
  system = await startSystem();
  realKey = createPrivateKey(fs.readFileSync(system.stack.config.jwt.privateKeyFile, 'utf8'));
  attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = await send(system.url, { method: 'GET', path: '/auth/.well-known/jwks.json' });
  jwksText = jwks.text;
  const jwk = (jwks.json as { keys: { kid: string }[] }).keys[0];
  kid = jwk.kid;
  publicPem = createPublicKey({ key: jwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
  admin = await adminSession(system.stack);
  victim = await registeredUser(system.stack);
  book = await createBook(system.stack, admin.bearer, 'Signed and Sealed', 10);
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

const AUTHENTICATION_REQUIRED = 'Authentication is required to access this resource';
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);
/** An attacker's own key pair, made once. */
let attacker: { privateKey: KeyObject; publicKey: KeyObject };
const otherKey = () => attacker.privateKey;

/** The claims a genuine access token would carry; ADMIN ones name the real admin. */
function claims(role: 'USER' | 'ADMIN', overrides: JWTPayload = {}): JWTPayload {
  return {
    sub: role === 'ADMIN' ? admin.userId : victim.userId,
    role,
    email: role === 'ADMIN' ? system.stack.admin.email : victim.email,
    iss: system.stack.config.jwt.issuer,
    aud: system.stack.config.jwt.audience,
    iat: now(),
    exp: now() + 900,
    jti: randomUUID(),
    ...overrides,
  };
}

function sign(payload: JWTPayload, options: { key?: KeyObject; alg?: string; header?: Record<string, unknown> } = {}): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: options.alg ?? 'RS256', kid, typ: 'JWT', ...options.header }).sign(options.key ?? realKey);
}

function hmac(payload: JWTPayload, secret: string, header: Record<string, unknown> = {}): string {
  const input = `${b64({ alg: 'HS256', kid, typ: 'JWT', ...header })}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** RS256 with the real key over any header: jose refuses to sign some of the headers tried here. */
function rs256Raw(header: Record<string, unknown>, payload: JWTPayload): string {
  const input = `${b64({ alg: 'RS256', kid, typ: 'JWT', ...header })}.${b64(payload)}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(realKey).toString('base64url')}`;
}

function unsigned(alg: string, payload: JWTPayload): string {
  return `${b64({ alg, typ: 'JWT' })}.${b64(payload)}.`;
}

/** Each forgery gives the Authorization header to send; every one must be refused with 401 everywhere. */
const FORGERIES: [string, () => Promise<string> | string][] = [
  ['alg none, ADMIN claims', () => `Bearer ${unsigned('none', claims('ADMIN'))}`],
  ['alg "None" in another case', () => `Bearer ${unsigned('None', claims('ADMIN'))}`],
  ['alg "NONE" with the genuine signature kept', () => `Bearer ${unsigned('NONE', claims('ADMIN'))}${victim.tokens.accessToken.split('.')[2]}`],
  ['the genuine token with its signature stripped', () => `Bearer ${victim.tokens.accessToken.split('.').slice(0, 2).join('.')}.`],
  ['HS256 keyed with the public key PEM (key confusion)', () => `Bearer ${hmac(claims('ADMIN'), publicPem)}`],
  ['HS256 keyed with the published JWKS document', () => `Bearer ${hmac(claims('ADMIN'), jwksText)}`],
  ['HS256 keyed with the kid', () => `Bearer ${hmac(claims('ADMIN'), kid)}`],
  ['RS512 signed with the real key', async () => `Bearer ${await sign(claims('ADMIN'), { alg: 'RS512' })}`],
  ['PS256 signed with the real key', async () => `Bearer ${await sign(claims('ADMIN'), { alg: 'PS256' })}`],
  ['RS256 by another key under the real kid', async () => `Bearer ${await sign(claims('ADMIN'), { key: otherKey() })}`],
  [
    'RS256 by another key that the header embeds as a jwk',
    async () => {
      return `Bearer ${await sign(claims('ADMIN'), { key: attacker.privateKey, header: { jwk: await exportJWK(attacker.publicKey) } })}`;
    },
  ],
  ['RS256 by another key, its jku pointing elsewhere', async () => `Bearer ${await sign(claims('ADMIN'), { key: otherKey(), header: { jku: 'http://127.0.0.1:1/jwks.json', kid: 'attacker' } })}`],
  ['a kid that is a path', async () => `Bearer ${await sign(claims('ADMIN'), { key: otherKey(), header: { kid: '../../../../dev/null' } })}`],
  ['a kid that is SQL', async () => `Bearer ${await sign(claims('ADMIN'), { key: otherKey(), header: { kid: "' OR 1=1 --" } })}`],
  ['the real key under an unknown kid', async () => `Bearer ${await sign(claims('USER'), { header: { kid: 'not-the-kid' } })}`],
  ['the real key with an unknown critical header', () => `Bearer ${rs256Raw({ crit: ['exp-ext'], 'exp-ext': true }, claims('USER'))}`],
  ['the real key with alg RS256 written in lower case', () => `Bearer ${rs256Raw({ alg: 'rs256' }, claims('USER'))}`],
  ['expired a minute ago', async () => `Bearer ${await sign(claims('USER', { iat: now() - 960, exp: now() - 60 }))}`],
  ['not valid before an hour from now', async () => `Bearer ${await sign(claims('USER', { nbf: now() + 3600 }))}`],
  ['another issuer', async () => `Bearer ${await sign(claims('ADMIN', { iss: 'https://evil.example' }))}`],
  ['another audience', async () => `Bearer ${await sign(claims('ADMIN', { aud: 'another-service' }))}`],
  ['no issuer or audience', async () => `Bearer ${await sign(claims('ADMIN', { iss: undefined, aud: undefined }))}`],
  ['no subject', async () => `Bearer ${await sign(claims('ADMIN', { sub: undefined }))}`],
  ['no expiry', async () => `Bearer ${await sign(claims('USER', { exp: undefined }))}`],
  ['a lower-case role', async () => `Bearer ${await sign(claims('USER', { role: 'admin' }))}`],
  [
    "the victim's genuine token with role changed to ADMIN",
    () => {
      const [header, payload, signature] = victim.tokens.accessToken.split('.');
      return `Bearer ${header}.${b64({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), role: 'ADMIN' })}.${signature}`;
    },
  ],
  [
    "the victim's genuine token with sub changed to the admin's",
    () => {
      const [header, payload, signature] = victim.tokens.accessToken.split('.');
      return `Bearer ${header}.${b64({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: admin.userId })}.${signature}`;
    },
  ],
  ['a refresh token as a bearer', () => `Bearer ${victim.tokens.refreshToken}`],
  ['two tokens in one header', () => `Bearer ${victim.tokens.accessToken} ${admin.tokens.accessToken}`],
  ['the genuine token without a scheme', () => victim.tokens.accessToken],
  ['the genuine token under Basic', () => `Basic ${victim.tokens.accessToken}`],
];

interface Family {
  name: string;
  /** The request to send with the header under test. */
  send(authorization: string | undefined): Promise<Answer>;
  /** Which genuine caller may use the route. */
  role: 'USER' | 'ADMIN';
  graphql?: boolean;
}

const json = (authorization: string | undefined): Record<string, string> => ({ 'Content-Type': 'application/json', ...(authorization === undefined ? {} : { Authorization: authorization }) });
const via = (method: string, path: string, body?: unknown) => (authorization: string | undefined) =>
  send(system.url, { method, path, headers: json(authorization), body: body === undefined ? undefined : JSON.stringify(body) });
const graphqlVia = (query: string) => via('POST', '/graphql', { query });

/** One route of each protected family, REST and GraphQL. Writes are harmless: what they would write is refused first. */
const FAMILIES: Family[] = [
  { name: 'auth: POST /auth/logout-all', role: 'USER', send: (a) => via('POST', '/auth/logout-all')(a) },
  { name: 'user: GET /api/user/{id}', role: 'USER', send: (a) => via('GET', `/api/user/${victim.userId}`)(a) },
  { name: 'user (admin): GET /api/user/', role: 'ADMIN', send: (a) => via('GET', '/api/user/')(a) },
  { name: 'book (admin): DELETE /api/books/{id}', role: 'ADMIN', send: (a) => via('DELETE', `/api/books/${randomUUID()}`)(a) },
  { name: 'order: GET /api/orders/me', role: 'USER', send: (a) => via('GET', '/api/orders/me')(a) },
  { name: 'order (admin): GET /api/orders', role: 'ADMIN', send: (a) => via('GET', '/api/orders')(a) },
  { name: 'payment: GET /api/payments', role: 'USER', send: (a) => via('GET', '/api/payments')(a) },
  { name: 'payment: POST /api/payments/checkout', role: 'USER', send: (a) => via('POST', '/api/payments/checkout', { checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] })(a) },
  { name: 'analytics (admin): GET /analytics/dashboard', role: 'ADMIN', send: (a) => via('GET', '/analytics/dashboard')(a) },
  { name: 'graphql: { me }', role: 'USER', graphql: true, send: (a) => graphqlVia('{ me { userId } }')(a) },
  { name: 'graphql (admin): { dashboard }', role: 'ADMIN', graphql: true, send: (a) => graphqlVia('{ dashboard { totalOrders } }')(a) },
];

function expectRefused(family: Family, answer: Answer): void {
  if (family.graphql) {
    expect(answer.json).toMatchObject({ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })] });
    // Nullable fields answer null beside the error; nothing of the caller's or anyone's data.
    expect(Object.values((answer.json as { data?: Record<string, unknown> | null }).data ?? {}).filter((value) => value !== null)).toEqual([]);
  } else {
    expectEnvelope(answer);
    expect({ family: family.name, status: answer.status, message: (answer.json as { message: string }).message }).toEqual({ family: family.name, status: 401, message: AUTHENTICATION_REQUIRED });
  }
}

describe('forged and tampered access tokens through the gateway', () => {
  it.each(FORGERIES)('%s: 401 (UNAUTHENTICATED) on every protected route family', async (_name, forge) => {
    const authorization = await forge();
    for (const family of FAMILIES) expectRefused(family, await family.send(authorization));
  });

  it('no token at all: 401 on every family', async () => {
    for (const family of FAMILIES) expectRefused(family, await family.send(undefined));
  });

  it('the genuine tokens pass every family, so the 401s above are about the forgeries', async () => {
    const buyer = await registeredUser(system.stack);
    for (const family of FAMILIES) {
      const answer = await family.send(family.role === 'ADMIN' ? admin.bearer : buyer.bearer);
      // The DELETE names no book: 404 once authenticated and authorized.
      const expected = family.name.includes('DELETE') ? 404 : family.graphql ? 200 : answer.status < 300 ? answer.status : 'a 2xx';
      expect({ family: family.name, status: answer.status, errors: (answer.json as { errors?: unknown } | undefined)?.errors }).toEqual({ family: family.name, status: expected, errors: undefined });
    }
  });

  it('an ADMIN token signed with the real key but for another audience cannot delete a profile, which remains', async () => {
    const target = await registeredUser(system.stack);
    const forged = `Bearer ${await sign(claims('ADMIN', { aud: 'another-service' }))}`;
    expectEnvelope(await via('DELETE', `/api/user/${target.userId}`)(forged));
    expect((await via('GET', `/api/user/${target.userId}`)(admin.bearer)).status).toBe(200);
  });
});

describe('a token whose user was deleted', () => {
  it('can no longer log in or refresh, and its still-unexpired access token reaches no profile and buys nothing', async () => {
    const leaving = await registeredUser(system.stack);
    const deleted = await via('DELETE', `/api/user/${leaving.userId}`)(admin.bearer);
    expect(deleted.status).toBe(200);
    // The auth service learns of the deletion from the user-deleted event.
    await waitFor(async () => (await via('POST', '/auth/refresh', { refreshToken: leaving.tokens.refreshToken })(undefined)).status === 401, { what: 'the session to be revoked' });
    const login = await via('POST', '/auth/login', { email: leaving.email, password: leaving.password, deviceId: 'again' })(undefined);
    expectEnvelope(login);
    expect(login.status).toBe(401);

    const profile = await via('GET', `/api/user/${leaving.userId}`)(leaving.bearer);
    expectEnvelope(profile);
    expect(profile.status).toBe(404);
    const update = await via('PUT', `/api/user/update/${leaving.userId}`, { firstName: 'Ghost', lastName: 'User', phoneNumber: '+14155550100', dateOfBirth: '1990-01-01', address: 'Nowhere' })(leaving.bearer);
    expectEnvelope(update);
    expect(update.status).toBe(404);
    const checkout = await via('POST', '/api/payments/checkout', { checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] })(leaving.bearer);
    expectEnvelope(checkout);
    expect(checkout.status).toBe(404);
    expect((await via('GET', '/api/payments')(leaving.bearer)).json).toEqual([]);
    const me = await graphqlVia('{ me { userId email } }')(leaving.bearer);
    expect((me.json as { data?: { me: unknown } }).data?.me ?? null).toBeNull();
  });
});

describe('refresh-token reuse through the gateway', () => {
  it('a rotated-out refresh token presented again is refused and ends the session: its successor stops working too', async () => {
    const reader = await registeredUser(system.stack);
    const rotated = await via('POST', '/auth/refresh', { refreshToken: reader.tokens.refreshToken })(undefined);
    expect(rotated.status).toBe(200);
    const successor = (rotated.json as { refreshToken: string }).refreshToken;

    const replayed = await via('POST', '/auth/refresh', { refreshToken: reader.tokens.refreshToken })(undefined);
    expectEnvelope(replayed);
    expect(replayed.status).toBe(401);
    const afterReuse = await via('POST', '/auth/refresh', { refreshToken: successor })(undefined);
    expectEnvelope(afterReuse);
    expect(afterReuse.status).toBe(401);
  });
});
