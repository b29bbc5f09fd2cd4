import request from 'supertest';
import { IsNull } from 'typeorm';
import { Session } from './entities';
import { adminSession, expectEnvelope, login, newUser, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';
import { claimsOf, headerOf, type Claims } from '../../test/jwt';

let stack: Stack;
beforeAll(async () => {
  // Reuse is tested right after a rotation here; the 10-second grace window has its own tests (test/security/sessions.test.ts).
  stack = await startStack({ env: { AUTH_REFRESH_GRACE_MS: '0' } });
});
afterAll(async () => {
  await stack?.stop();
});

const auth = () => request(stack.urls.auth);
const users = () => request(stack.urls.user);

describe('POST /auth/register', () => {
  it('creates the account and the profile, answering the RegisterResponseDto', async () => {
    const body = newUser({ email: 'Mixed.Case@Example.com' });
    const res = await auth().post('/auth/register').send(body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ userId: expect.stringMatching(/^[0-9a-f-]{36}$/), email: 'mixed.case@example.com', message: 'User registered successfully' });

    const tokens = await login(stack.urls.auth, 'MIXED.case@example.com', body.password);
    const profile = await users().get(`/api/user/${res.body.userId}`).set('Authorization', `Bearer ${tokens.accessToken}`);
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({ userId: res.body.userId, email: 'mixed.case@example.com', firstName: 'Ada', dateOfBirth: '1990-05-17' });
  });

  it('answers 409 for an email that already exists, whatever its case', async () => {
    const body = newUser();
    expect((await auth().post('/auth/register').send(body)).status).toBe(200);
    const res = await auth()
      .post('/auth/register')
      .send({ ...body, email: body.email.toUpperCase() });
    expectEnvelope(res, 409, `A user with email ${body.email} already exists`);
  });

  it('answers 400 with every failing field', async () => {
    const res = await auth()
      .post('/auth/register')
      .send({ email: 'not-an-email', password: 'short', firstName: ' ', lastName: 'x'.repeat(51), phoneNumber: '12ab', dateOfBirth: '2999-01-01', address: '' });
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    const fields = (res.body.validationErrors as string[]).map((line) => line.split(':')[0]);
    expect(new Set(fields)).toEqual(new Set(['email', 'password', 'firstName', 'lastName', 'phoneNumber', 'dateOfBirth', 'address']));
  });

  it('refuses a date of birth that is not a real date', async () => {
    const res = await auth()
      .post('/auth/register')
      .send(newUser({ dateOfBirth: '1990-02-30' }));
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual([expect.stringMatching(/^dateOfBirth: /)]);
  });

  it('creates exactly one account from 20 parallel registrations with one email', async () => {
    const body = newUser();
    const results = await Promise.all(Array.from({ length: 20 }, () => auth().post('/auth/register').send(body)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const admin = await adminSession(stack);
    const found = await users().get('/api/user/search').query({ keyword: body.email }).set('Authorization', admin.bearer);
    expect(found.body).toHaveLength(1);
  });
});

describe('POST /auth/login', () => {
  it('answers tokens with expiresIn in milliseconds and a JWT carrying subject and role', async () => {
    const user = await registeredUser(stack);
    expect(user.tokens.expiresIn).toBe(900000);
    expect(user.tokens.refreshToken.length).toBeGreaterThanOrEqual(43);
    const [header, payload] = [headerOf(user.tokens.accessToken), claimsOf(user.tokens.accessToken)] as [Claims, { exp: number; iat: number }];
    expect(header).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
    expect(payload).toMatchObject({ sub: user.userId, role: 'USER', email: user.email, iss: 'bookstore-auth', aud: 'bookstore', jti: expect.any(String) });
    expect(payload.exp - payload.iat).toBe(900);
  });

  it('gives the same 401 for an unknown email and a wrong password', async () => {
    const user = await registeredUser(stack);
    const wrong = await auth().post('/auth/login').send({ email: user.email, password: 'Wrong12345', deviceId: 'd' });
    const unknown = await auth().post('/auth/login').send({ email: 'nobody@example.com', password: 'Wrong12345', deviceId: 'd' });
    expectEnvelope(wrong, 401, 'Invalid email or password.');
    expectEnvelope(unknown, 401, 'Invalid email or password.');
  });

  it('answers 400 without a deviceId', async () => {
    const res = await auth().post('/auth/login').send({ email: 'a@example.com', password: 'x' });
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toContain('deviceId: must be a string');
    expect((res.body.validationErrors as string[]).every((line) => line.startsWith('deviceId: '))).toBe(true);
  });

  it('answers 400 for a deviceId over 64 characters once trimmed', async () => {
    const res = await auth()
      .post('/auth/login')
      .send({ email: 'a@example.com', password: 'x', deviceId: `  ${'d'.repeat(65)}  ` });
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual(['deviceId: must be shorter than or equal to 64 characters']);
  });

  it('replaces the earlier session of the same device', async () => {
    const user = await registeredUser(stack);
    const first = await login(stack.urls.auth, user.email, user.password, 'phone-1');
    const second = await login(stack.urls.auth, user.email, user.password, 'phone-1');
    const other = await login(stack.urls.auth, user.email, user.password, 'laptop-1');
    expect((await auth().post('/auth/refresh').send({ refreshToken: first.refreshToken })).status).toBe(401);
    expect((await auth().post('/auth/refresh').send({ refreshToken: second.refreshToken })).status).toBe(200);
    expect((await auth().post('/auth/refresh').send({ refreshToken: other.refreshToken })).status).toBe(200);
  });
});

describe('concurrent logins', () => {
  it('answers all of 10 concurrent logins from one device and leaves that device one live session', async () => {
    const user = await registeredUser(stack);
    const results = await Promise.all(Array.from({ length: 10 }, () => auth().post('/auth/login').send({ email: user.email, password: user.password, deviceId: 'tablet-1' })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const live = await stack.auth.db.manager.count(Session, { where: { userId: user.userId, deviceId: 'tablet-1', revokedAt: IsNull() } });
    expect(live).toBe(1);
    const refreshed = await Promise.all(results.map((r) => auth().post('/auth/refresh').send({ refreshToken: r.body.refreshToken })));
    expect(refreshed.filter((r) => r.status === 200)).toHaveLength(1);
  });
});

describe('POST /auth/refresh', () => {
  it('rotates once: the new token works, the old one is refused', async () => {
    const user = await registeredUser(stack);
    const res = await auth().post('/auth/refresh').send({ refreshToken: user.tokens.refreshToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accessToken: expect.any(String), refreshToken: expect.any(String), expiresIn: 900000 });
    expect(res.body.refreshToken).not.toBe(user.tokens.refreshToken);
    const profile = await users().get(`/api/user/${user.userId}`).set('Authorization', `Bearer ${res.body.accessToken}`);
    expect(profile.status).toBe(200);
  });

  it("treats a reused token as theft: 401, and the session's new token dies too", async () => {
    const user = await registeredUser(stack);
    const rotated = await auth().post('/auth/refresh').send({ refreshToken: user.tokens.refreshToken });
    expect(rotated.status).toBe(200);
    const reuse = await auth().post('/auth/refresh').send({ refreshToken: user.tokens.refreshToken });
    expectEnvelope(reuse, 401);
    const afterTheft = await auth().post('/auth/refresh').send({ refreshToken: rotated.body.refreshToken });
    expectEnvelope(afterTheft, 401);
  });

  it('answers 401 for an unknown token and 400 for a missing one', async () => {
    expectEnvelope(await auth().post('/auth/refresh').send({ refreshToken: 'made-up' }), 401);
    expectEnvelope(await auth().post('/auth/refresh').send({}), 400);
  });
});

describe('POST /auth/logout and /auth/logout-all', () => {
  it('logout revokes one session and answers 204, also for unknown tokens', async () => {
    const user = await registeredUser(stack);
    const other = await login(stack.urls.auth, user.email, user.password, 'second-device');
    const res = await auth().post('/auth/logout').send({ refreshToken: user.tokens.refreshToken });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await auth().post('/auth/refresh').send({ refreshToken: user.tokens.refreshToken })).status).toBe(401);
    expect((await auth().post('/auth/refresh').send({ refreshToken: other.refreshToken })).status).toBe(200);
    expect((await auth().post('/auth/logout').send({ refreshToken: 'unknown' })).status).toBe(204);
  });

  it('logout-all revokes every session of the caller', async () => {
    const user = await registeredUser(stack);
    const other = await login(stack.urls.auth, user.email, user.password, 'second-device');
    const res = await auth().post('/auth/logout-all').set('Authorization', user.bearer);
    expect(res.status).toBe(204);
    expect((await auth().post('/auth/refresh').send({ refreshToken: user.tokens.refreshToken })).status).toBe(401);
    expect((await auth().post('/auth/refresh').send({ refreshToken: other.refreshToken })).status).toBe(401);
  });

  it('logout-all without a bearer token is 401', async () => {
    expectEnvelope(await auth().post('/auth/logout-all'), 401, 'Authentication is required to access this resource');
  });
});

describe('a deleted profile', () => {
  it('can no longer log in or refresh', async () => {
    const user = await registeredUser(stack);
    const admin = await adminSession(stack);
    const del = await users().delete(`/api/user/${user.userId}`).set('Authorization', admin.bearer);
    expect(del.status).toBe(200);
    await waitFor(async () => (await auth().post('/auth/login').send({ email: user.email, password: user.password, deviceId: 'x' })).status === 401, {
      timeoutMs: 15_000,
      what: 'login refused',
    });
    expectEnvelope(await auth().post('/auth/refresh').send({ refreshToken: user.tokens.refreshToken }), 401);
  });
});

describe('GET /auth/.well-known/jwks.json', () => {
  it('publishes the RSA public key only', async () => {
    const res = await auth().get('/auth/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.body.keys).toEqual([{ kty: 'RSA', n: expect.any(String), e: 'AQAB', kid: expect.any(String), alg: 'RS256', use: 'sig' }]);
  });
});
