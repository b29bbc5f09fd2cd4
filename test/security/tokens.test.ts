/**
 * Forged, stale and stolen credentials through the gateway (issue 8, item 4). The auth service's own
 * tests (subgraphs/auth/tokens.test.ts) try forgeries against one route of one service; here every
 * protected route family, REST and GraphQL, gets each forgery through the gateway, plus the tricks
 * those tests leave out (other RS/PS algorithms with the real key, key material in the header, kid
 * tricks, nbf, crit), a token whose user was deleted, and refresh-token reuse through the gateway.
 */
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { createBook, type CatalogueBook } from '../commerce';
import { adminSession, AUTHENTICATION_REQUIRED, expectEnvelope, registeredUser, waitFor } from '../harness';
import { send, startSystem, type Answer, type System } from '../hostile';
import { genuineClaims, nowSeconds as now, publishedKey, signHs256, signingKey, signJwt, tampered, unsignedJwt as unsigned, type Claims as JWTPayload } from '../jwt';

let system: System;
let realKey: KeyObject;
let kid: string;
let publicPem: string;
let jwksText: string;
let admin: Awaited<ReturnType<typeof adminSession>>;
let victim: Awaited<ReturnType<typeof registeredUser>>;
let book: CatalogueBook;

beforeAll(async () => {
  // Reuse is tested right after a rotation here; the 10-second grace window has its own tests (sessions.test.ts).
  system = await startSystem({ env: { AUTH_REFRESH_GRACE_MS: '0' } });
  realKey = signingKey(system.stack.config.jwt.privateKeyFile);
  attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = await send(system.url, { method: 'GET', path: '/auth/.well-known/jwks.json' });
  jwksText = jwks.text;
  ({ kid, publicPem } = publishedKey(jwks.json as Parameters<typeof publishedKey>[0]));
  admin = await adminSession(system.stack);
  victim = await registeredUser(system.stack);
  book = await createBook(system.stack, admin.bearer, 'Signed and Sealed', 10);
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

/** An attacker's own key pair, made once. */
let attacker: { privateKey: KeyObject; publicKey: KeyObject };
const otherKey = () => attacker.privateKey;

/** The claims a genuine access token would carry; ADMIN ones name the real admin. */
const claims = (role: 'USER' | 'ADMIN', overrides: JWTPayload = {}): JWTPayload => genuineClaims(system.stack.config.jwt, role === 'ADMIN' ? admin : victim, role, overrides);

async function sign(payload: JWTPayload, options: { key?: KeyObject; alg?: string; header?: Record<string, unknown> } = {}): Promise<string> {
  return signJwt(payload, options.key ?? realKey, { kid, ...options.header }, options.alg);
}

const hmac = (payload: JWTPayload, secret: string) => signHs256(payload, secret, { kid });

/** RS256 with the real key over any header. */
const rs256Raw = (header: Record<string, unknown>, payload: JWTPayload) => signJwt(payload, realKey, { kid, ...header });

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
      return `Bearer ${await sign(claims('ADMIN'), { key: attacker.privateKey, header: { jwk: attacker.publicKey.export({ format: 'jwk' }) } })}`;
    },
  ],
  [
    'RS256 by another key, its jku pointing elsewhere',
    async () => `Bearer ${await sign(claims('ADMIN'), { key: otherKey(), header: { jku: 'http://127.0.0.1:1/jwks.json', kid: 'attacker' } })}`,
  ],
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
  ["the victim's genuine token with role changed to ADMIN", () => `Bearer ${tampered(victim.tokens.accessToken, { role: 'ADMIN' })}`],
  ["the victim's genuine token with sub changed to the admin's", () => `Bearer ${tampered(victim.tokens.accessToken, { sub: admin.userId })}`],
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

const json = (authorization: string | undefined): Record<string, string> => ({
  'Content-Type': 'application/json',
  ...(authorization === undefined ? {} : { Authorization: authorization }),
});
const via = (method: string, path: string, body?: unknown) => (authorization: string | undefined) =>
  send(system.url, { method, path, headers: json(authorization), body: body === undefined ? undefined : JSON.stringify(body) });
const graphqlVia = (query: string) => via('POST', '/graphql', { query });

/** One route of each protected family, REST and GraphQL. Writes are harmless: what they would write is refused first. */
const FAMILIES: Family[] = [
  { name: 'user: GET /api/user/{id}', role: 'USER', send: (a) => via('GET', `/api/user/${victim.userId}`)(a) },
  { name: 'user (admin): GET /api/user/', role: 'ADMIN', send: (a) => via('GET', '/api/user/')(a) },
  { name: 'book (admin): DELETE /api/books/{id}', role: 'ADMIN', send: (a) => via('DELETE', `/api/books/${randomUUID()}`)(a) },
  { name: 'order: GET /api/orders/me', role: 'USER', send: (a) => via('GET', '/api/orders/me')(a) },
  { name: 'order (admin): GET /api/orders', role: 'ADMIN', send: (a) => via('GET', '/api/orders')(a) },
  { name: 'payment: GET /api/payments', role: 'USER', send: (a) => via('GET', '/api/payments')(a) },
  {
    name: 'payment: POST /api/payments/checkout',
    role: 'USER',
    send: (a) => via('POST', '/api/payments/checkout', { checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] })(a),
  },
  { name: 'analytics (admin): GET /analytics/dashboard', role: 'ADMIN', send: (a) => via('GET', '/analytics/dashboard')(a) },
  { name: 'graphql: { me }', role: 'USER', graphql: true, send: (a) => graphqlVia('{ me { userId } }')(a) },
  { name: 'graphql (admin): { dashboard }', role: 'ADMIN', graphql: true, send: (a) => graphqlVia('{ dashboard { totalOrders } }')(a) },
  { name: 'graphql: { mySessions }', role: 'USER', graphql: true, send: (a) => graphqlVia('{ mySessions { sessionId } }')(a) },
  { name: 'auth: GET /auth/sessions', role: 'USER', send: (a) => via('GET', '/auth/sessions')(a) },
  // Last: the genuine caller's logout-all ends the session the families above use.
  { name: 'auth: POST /auth/logout-all', role: 'USER', send: (a) => via('POST', '/auth/logout-all')(a) },
];

function expectRefused(family: Family, answer: Answer): void {
  if (family.graphql) {
    expect(answer.json).toMatchObject({ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })] });
    // Nullable fields answer null beside the error; nothing of the caller's or anyone's data.
    expect(Object.values((answer.json as { data?: Record<string, unknown> | null }).data ?? {}).filter((value) => value !== null)).toEqual([]);
  } else {
    expectEnvelope(answer);
    expect({ family: family.name, status: answer.status, message: (answer.json as { message: string }).message }).toEqual({
      family: family.name,
      status: 401,
      message: AUTHENTICATION_REQUIRED,
    });
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
      expect({ family: family.name, status: answer.status, errors: (answer.json as { errors?: unknown } | undefined)?.errors }).toEqual({
        family: family.name,
        status: expected,
        errors: undefined,
      });
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
  it('is refused everywhere within 2 seconds (issue 18, finding 5), and the account can no longer log in or refresh', async () => {
    const leaving = await registeredUser(system.stack);
    const deleted = await via('DELETE', `/api/user/${leaving.userId}`)(admin.bearer);
    expect(deleted.status).toBe(200);
    // user-deleted reaches the auth service, whose sessions-revoked reaches every verifier.
    await waitFor(async () => (await via('GET', `/api/user/${victim.userId}`)(leaving.bearer)).status === 401, { timeoutMs: 2000, what: "the deleted user's token to be refused" });

    for (const family of FAMILIES.filter((f) => f.role === 'USER')) expectRefused(family, await family.send(leaving.bearer));
    const refresh = await via('POST', '/auth/refresh', { refreshToken: leaving.tokens.refreshToken })(undefined);
    expectEnvelope(refresh);
    expect(refresh.status).toBe(401);
    const login = await via('POST', '/auth/login', { email: leaving.email, password: leaving.password, deviceId: 'again' })(undefined);
    expectEnvelope(login);
    expect(login.status).toBe(401);
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
