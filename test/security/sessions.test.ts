/**
 * Device sessions and revocation that takes effect now (issues 15 and 18), through the gateway:
 * each device sees its sessions and ends others; an ended session's tokens die at once in the auth
 * service and within 2 seconds in every other service (the `sessions-revoked` event); nobody but
 * the user and an ADMIN sees or ends a user's sessions; parallel refreshes within the grace window
 * end nothing; the per-account login throttle holds whatever X-Forwarded-For says; passwords stop at
 * 72 bytes; token answers are never cached.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { SERVICE_FACTORIES } from '../../subgraphs';
import { createLogger } from '../../platform/logger';
import { errorCodes, graphql } from '../graphql';
import { adminSession, expectEnvelope, newUser, registeredUser, waitFor, type Tokens } from '../harness';
import { startSystem, type System } from '../hostile';
import { claimsOf } from '../jwt';

const THROTTLE_MAX_FAILURES = 3;
const THROTTLE_WINDOW_MS = 5000;
/** CONTRACT §2: another service refuses a revoked session's access token within this long. */
const REVOCATION_BUDGET_MS = 2000;

let system: System;
let admin: Awaited<ReturnType<typeof adminSession>>;

beforeAll(async () => {
  system = await startSystem({ env: { LOGIN_THROTTLE_MAX_FAILURES: String(THROTTLE_MAX_FAILURES), LOGIN_THROTTLE_WINDOW_MS: String(THROTTLE_WINDOW_MS) } });
  admin = await adminSession(system.stack);
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

const gateway = () => request(system.url);
const bearer = (tokens: Tokens) => `Bearer ${tokens.accessToken}`;
const sessionOf = (tokens: Tokens) => claimsOf(tokens.accessToken).sid as string;
/** DELETE /auth/sessions/{id} of `session`, asked by the holder of `caller` (a bearer string or tokens). */
const endSession = (session: Tokens, caller: Tokens | string) =>
  gateway()
    .delete(`/auth/sessions/${sessionOf(session)}`)
    .set('Authorization', typeof caller === 'string' ? caller : bearer(caller));

async function loginFrom(email: string, password: string, deviceId: string, userAgent: string): Promise<Tokens> {
  const res = await gateway().post('/auth/login').set('User-Agent', userAgent).send({ email, password, deviceId });
  expect(res.status).toBe(200);
  return res.body as Tokens;
}

/** A fresh user signed in on a laptop (Chrome on macOS) and a phone (Safari on iOS). */
async function twoDevices() {
  const user = await registeredUser(system.stack);
  const laptop = await loginFrom(
    user.email,
    user.password,
    'laptop-1',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  );
  const phone = await loginFrom(
    user.email,
    user.password,
    'phone-1',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  );
  // registeredUser's own login ("test-device") is not needed here.
  expect((await endSession(user.tokens, laptop)).status).toBe(204);
  return { user, laptop, phone };
}

/** Waits until `check` answers 401 for the token, at most the revocation budget. */
async function refusedWithinBudget(what: string, status: () => Promise<number>): Promise<void> {
  await waitFor(async () => (await status()) === 401, { timeoutMs: REVOCATION_BUDGET_MS, what });
}

describe('each device sees the sessions of the account', () => {
  it('over REST: both sessions, most recently used first, current for the asking device only', async () => {
    const { laptop, phone } = await twoDevices();
    const fromLaptop = await gateway().get('/auth/sessions').set('Authorization', bearer(laptop));
    expect(fromLaptop.status).toBe(200);
    expect(fromLaptop.body).toEqual([
      { sessionId: sessionOf(phone), deviceId: 'phone-1', deviceName: 'Safari on iOS', createdAt: expect.any(String), lastUsedAt: expect.any(String), current: false },
      { sessionId: sessionOf(laptop), deviceId: 'laptop-1', deviceName: 'Chrome on macOS', createdAt: expect.any(String), lastUsedAt: expect.any(String), current: true },
    ]);
    const fromPhone = await gateway().get('/auth/sessions').set('Authorization', bearer(phone));
    expect(fromPhone.body.map((s: { deviceId: string; current: boolean }) => [s.deviceId, s.current])).toEqual([
      ['phone-1', true],
      ['laptop-1', false],
    ]);
  });

  it('lastUsedAt moves on refresh, which puts that session first', async () => {
    const { laptop, phone } = await twoDevices();
    const before = (await gateway().get('/auth/sessions').set('Authorization', bearer(phone))).body as { deviceId: string; lastUsedAt: string }[];
    const refreshed = await gateway().post('/auth/refresh').send({ refreshToken: laptop.refreshToken });
    expect(refreshed.status).toBe(200);
    const after = (await gateway().get('/auth/sessions').set('Authorization', bearer(phone))).body as { deviceId: string; lastUsedAt: string }[];
    expect(after.map((s) => s.deviceId)).toEqual(['laptop-1', 'phone-1']);
    expect(after[0].lastUsedAt > before.find((s) => s.deviceId === 'laptop-1')!.lastUsedAt).toBe(true);
  });

  it('over GraphQL: mySessions, the same sessions and the same current', async () => {
    const { laptop, phone } = await twoDevices();
    const res = await graphql(system.url, '{ mySessions { sessionId deviceId deviceName current createdAt lastUsedAt } }', { bearer: bearer(phone) });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.mySessions).toEqual([
      expect.objectContaining({ sessionId: sessionOf(phone), deviceName: 'Safari on iOS', current: true }),
      expect.objectContaining({ sessionId: sessionOf(laptop), deviceName: 'Chrome on macOS', current: false }),
    ]);
  });

  it('token answers are never cached (Cache-Control: no-store)', async () => {
    const user = await registeredUser(system.stack);
    const login = await gateway().post('/auth/login').send({ email: user.email, password: user.password, deviceId: 'cache' });
    expect([login.status, login.headers['cache-control']]).toEqual([200, 'no-store']);
    const refresh = await gateway().post('/auth/refresh').send({ refreshToken: login.body.refreshToken });
    expect([refresh.status, refresh.headers['cache-control']]).toEqual([200, 'no-store']);
  });
});

describe('ending a session', () => {
  it('over REST: its refresh token is 401 at once and its access token is refused by the user and payment services within 2 s; the other device keeps working', async () => {
    const { user, laptop, phone } = await twoDevices();
    expect((await endSession(phone, laptop)).status).toBe(204);

    expectEnvelope(await gateway().post('/auth/refresh').send({ refreshToken: phone.refreshToken }), 401);
    await refusedWithinBudget(
      'the user service to refuse the ended session',
      async () => (await gateway().get(`/api/user/${user.userId}`).set('Authorization', bearer(phone))).status,
    );
    await refusedWithinBudget('the payment service to refuse the ended session', async () => (await gateway().get('/api/payments').set('Authorization', bearer(phone))).status);
    expectEnvelope(await gateway().get('/auth/sessions').set('Authorization', bearer(phone)), 401);

    expect((await gateway().get(`/api/user/${user.userId}`).set('Authorization', bearer(laptop))).status).toBe(200);
    const left = await gateway().get('/auth/sessions').set('Authorization', bearer(laptop));
    expect(left.body.map((s: { sessionId: string }) => s.sessionId)).toEqual([sessionOf(laptop)]);
  });

  it('over GraphQL: endSession, then the ended token is UNAUTHENTICATED in every subgraph within 2 s', async () => {
    const { laptop, phone } = await twoDevices();
    const ended = await graphql(system.url, 'mutation($id: ID!) { endSession(sessionId: $id) }', { bearer: bearer(phone), variables: { id: sessionOf(laptop) } });
    expect(ended.body).toEqual({ data: { endSession: sessionOf(laptop) } });
    await waitFor(async () => errorCodes((await graphql(system.url, '{ me { userId } }', { bearer: bearer(laptop) })).body).includes('UNAUTHENTICATED'), {
      timeoutMs: REVOCATION_BUDGET_MS,
      what: 'the user subgraph to refuse the ended session',
    });
    expect(errorCodes((await graphql(system.url, '{ mySessions { sessionId } }', { bearer: bearer(laptop) })).body)).toEqual(['UNAUTHENTICATED']);
    expect(errorCodes((await graphql(system.url, '{ myPayments { paymentId } }', { bearer: bearer(laptop) })).body)).toEqual(['UNAUTHENTICATED']);
  });

  it('an ended, unknown or malformed session id: 404, 404, 400', async () => {
    const { laptop, phone } = await twoDevices();
    expect((await endSession(phone, laptop)).status).toBe(204);
    expectEnvelope(await endSession(phone, laptop), 404, `Session not found: ${sessionOf(phone)}`);
    expectEnvelope(await gateway().delete(`/auth/sessions/${randomUUID()}`).set('Authorization', bearer(laptop)), 404);
    expectEnvelope(await gateway().delete('/auth/sessions/not-a-uuid').set('Authorization', bearer(laptop)), 400);
    expectEnvelope(await gateway().delete(`/auth/sessions/${randomUUID()}`), 401);
  });

  it('logout and logout-all refuse the access tokens too, not only the refresh tokens (issue 18, finding 5)', async () => {
    const { user, laptop, phone } = await twoDevices();
    expect((await gateway().post('/auth/logout').send({ refreshToken: phone.refreshToken })).status).toBe(204);
    await refusedWithinBudget('the logged-out session to be refused', async () => (await gateway().get(`/api/user/${user.userId}`).set('Authorization', bearer(phone))).status);
    expect((await gateway().get(`/api/user/${user.userId}`).set('Authorization', bearer(laptop))).status).toBe(200);

    expect((await gateway().post('/auth/logout-all').set('Authorization', bearer(laptop))).status).toBe(204);
    await refusedWithinBudget('every session to be refused after logout-all', async () => (await gateway().get('/api/orders/me').set('Authorization', bearer(laptop))).status);
    const again = await loginFrom(user.email, user.password, 'laptop-1', 'curl/8.5.0');
    expect((await gateway().get(`/api/user/${user.userId}`).set('Authorization', bearer(again))).status).toBe(200);
  });

  it('a service that starts after the revocation refuses the token as well: it reads what it missed', async () => {
    const { user, laptop, phone } = await twoDevices();
    expect((await endSession(phone, laptop)).status).toBe(204);
    await refusedWithinBudget('the running user service to refuse it', async () => (await gateway().get(`/api/user/${user.userId}`).set('Authorization', bearer(phone))).status);

    const late = await SERVICE_FACTORIES.user!({ config: system.stack.config, logger: createLogger('warn'), bus: system.stack.bus });
    try {
      const port = await late.start(0, '127.0.0.1');
      const lateUsers = () => request(`http://127.0.0.1:${port}`);
      await waitFor(async () => (await lateUsers().get(`/api/user/${user.userId}`).set('Authorization', bearer(phone))).status === 401, {
        timeoutMs: REVOCATION_BUDGET_MS,
        what: 'the late service to refuse the session revoked before it started',
      });
      expect((await lateUsers().get(`/api/user/${user.userId}`).set('Authorization', bearer(laptop))).status).toBe(200);
    } finally {
      await late.stop();
    }
  });
});

describe('what a starting service loads: GET /auth/internal/revoked-sessions', () => {
  it('lists the recently revoked sessions to a caller with the internal key only, and is hidden behind the gateway', async () => {
    const { laptop, phone } = await twoDevices();
    expect((await endSession(phone, laptop)).status).toBe(204);
    const listed = await request(system.stack.urls.auth).get('/auth/internal/revoked-sessions').set('X-Internal-Api-Key', system.stack.config.internalApiKey);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual(expect.arrayContaining([{ sessionId: sessionOf(phone), userId: claimsOf(phone.accessToken).sub, revokedAt: expect.stringMatching(/Z$/) }]));
    expect(listed.body.map((s: { sessionId: string }) => s.sessionId)).not.toContain(sessionOf(laptop));

    expectEnvelope(await request(system.stack.urls.auth).get('/auth/internal/revoked-sessions'), 401, 'A valid internal API key is required');
    expectEnvelope(await request(system.stack.urls.auth).get('/auth/internal/revoked-sessions').set('X-Internal-Api-Key', 'guessed'), 401);
    expectEnvelope(await gateway().get('/auth/internal/revoked-sessions').set('X-Internal-Api-Key', system.stack.config.internalApiKey), 404);
  });
});

describe("someone else's sessions", () => {
  it('a user can neither list nor end them (REST and GraphQL), and they stay alive', async () => {
    const { user: victim, phone } = await twoDevices();
    const other = await registeredUser(system.stack);
    expectEnvelope(await endSession(phone, other.bearer), 404);
    expectEnvelope(await gateway().get(`/auth/users/${victim.userId}/sessions`).set('Authorization', other.bearer), 403);
    expectEnvelope(await gateway().delete(`/auth/users/${victim.userId}/sessions`).set('Authorization', other.bearer), 403);
    const ended = await graphql(system.url, 'mutation($id: ID!) { endSession(sessionId: $id) }', { bearer: other.bearer, variables: { id: sessionOf(phone) } });
    expect(errorCodes(ended.body)).toEqual(['NOT_FOUND']);
    const read = await graphql(system.url, 'query($id: ID!) { user(userId: $id) { userId sessions { sessionId } } }', { bearer: other.bearer, variables: { id: victim.userId } });
    expect(errorCodes(read.body)).toContain('FORBIDDEN');
    expect(JSON.stringify(read.body.data ?? null)).not.toContain(sessionOf(phone));

    expect((await gateway().get(`/api/user/${victim.userId}`).set('Authorization', bearer(phone))).status).toBe(200);
    expect((await gateway().post('/auth/refresh').send({ refreshToken: phone.refreshToken })).status).toBe(200);
  });

  it('an ADMIN lists them (REST and User.sessions) and ends them all; the user is signed out everywhere within 2 s', async () => {
    const { user, laptop, phone } = await twoDevices();
    const listed = await gateway().get(`/auth/users/${user.userId}/sessions`).set('Authorization', admin.bearer);
    expect(listed.status).toBe(200);
    expect(listed.body.map((s: { sessionId: string; current: boolean }) => [s.sessionId, s.current])).toEqual([
      [sessionOf(phone), false],
      [sessionOf(laptop), false],
    ]);
    const viaGraphql = await graphql(system.url, 'query($id: ID!) { user(userId: $id) { email sessions { sessionId deviceName } } }', {
      bearer: admin.bearer,
      variables: { id: user.userId },
    });
    expect(viaGraphql.body).toEqual({
      data: {
        user: {
          email: user.email,
          sessions: [
            { sessionId: sessionOf(phone), deviceName: 'Safari on iOS' },
            { sessionId: sessionOf(laptop), deviceName: 'Chrome on macOS' },
          ],
        },
      },
    });

    expect((await gateway().delete(`/auth/users/${user.userId}/sessions`).set('Authorization', admin.bearer)).status).toBe(204);
    for (const tokens of [laptop, phone]) {
      await refusedWithinBudget('the ended sessions to be refused', async () => (await gateway().get(`/api/user/${user.userId}`).set('Authorization', bearer(tokens))).status);
      expectEnvelope(await gateway().post('/auth/refresh').send({ refreshToken: tokens.refreshToken }), 401);
    }
    expect((await gateway().get(`/auth/users/${user.userId}/sessions`).set('Authorization', admin.bearer)).body).toEqual([]);
    expect((await gateway().get('/auth/sessions').set('Authorization', admin.bearer)).status).toBe(200);
  });

  it('an ADMIN asking about an unknown user gets 404, and a malformed id 400', async () => {
    expectEnvelope(await gateway().get(`/auth/users/${randomUUID()}/sessions`).set('Authorization', admin.bearer), 404);
    expectEnvelope(await gateway().delete(`/auth/users/${randomUUID()}/sessions`).set('Authorization', admin.bearer), 404);
    expectEnvelope(await gateway().get('/auth/users/nope/sessions').set('Authorization', admin.bearer), 400);
  });
});

describe('the refresh grace window (issue 18, finding 6)', () => {
  it('ten parallel refreshes with one token: exactly one wins, its new tokens work, and nothing is revoked', async () => {
    const user = await registeredUser(system.stack);
    const answers = await Promise.all(Array.from({ length: 10 }, () => gateway().post('/auth/refresh').send({ refreshToken: user.tokens.refreshToken })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(9).fill(401)]);
    const winner = answers.find((a) => a.status === 200)!.body as Tokens;

    expect((await gateway().get(`/api/user/${user.userId}`).set('Authorization', bearer(winner))).status).toBe(200);
    const sessions = await gateway().get('/auth/sessions').set('Authorization', bearer(winner));
    expect(sessions.body.map((s: { sessionId: string }) => s.sessionId)).toEqual([sessionOf(user.tokens)]);
    // The old access token of the same session stays valid too: the session was not ended.
    expect((await gateway().get(`/api/user/${user.userId}`).set('Authorization', user.bearer)).status).toBe(200);
    expect((await gateway().post('/auth/refresh').send({ refreshToken: winner.refreshToken })).status).toBe(200);
  });
});

describe('the per-account failed-login throttle (issue 18, finding 3)', () => {
  it(`after ${THROTTLE_MAX_FAILURES} failures from ever-new X-Forwarded-For addresses the account answers 429 with Retry-After, the right password included; after the window the owner gets in`, async () => {
    const user = await registeredUser(system.stack);
    const attempt = (password: string, forwardedFor: string) =>
      gateway().post('/auth/login').set('X-Forwarded-For', forwardedFor).send({ email: user.email.toUpperCase(), password, deviceId: 'throttled' });
    // At once: the window starts with the first failure, and a loaded machine must not let it pass before the last.
    const failures = await Promise.all(Array.from({ length: THROTTLE_MAX_FAILURES }, (_, i) => attempt('Wrong-Password-1', `203.0.113.${i + 1}`)));
    for (const failure of failures) expectEnvelope(failure, 401);

    const limited = await attempt('Wrong-Password-1', '198.51.100.7');
    expectEnvelope(limited, 429, 'Too many failed logins for this account; try again later');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(THROTTLE_WINDOW_MS / 1000);
    expectEnvelope(await attempt(user.password, '192.0.2.55'), 429);
    // Other accounts are not slowed down.
    const bystander = await registeredUser(system.stack);
    expect((await gateway().post('/auth/login').send({ email: bystander.email, password: bystander.password, deviceId: 'x' })).status).toBe(200);

    await waitFor(async () => (await attempt(user.password, '192.0.2.56')).status === 200, { timeoutMs: THROTTLE_WINDOW_MS + 5000, what: 'the owner to get in after the window' });
    // A success clears the count: one more mistake is an ordinary 401.
    expectEnvelope(await attempt('Wrong-Password-1', '203.0.113.99'), 401);
  });

  it('an unknown email is throttled the same way, so the 429 tells nobody whether the account exists', async () => {
    const email = `nobody-${randomUUID()}@example.com`;
    const answers = await Promise.all(
      Array.from({ length: THROTTLE_MAX_FAILURES + 1 }, () => gateway().post('/auth/login').send({ email, password: 'Wrong-Password-1', deviceId: 'd' })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array<number>(THROTTLE_MAX_FAILURES).fill(401), 429]);
    expectEnvelope(
      answers.find((answer) => answer.status === 429)!,
      429,
      'Too many failed logins for this account; try again later',
    );
  });
});

describe('passwords stop at 72 bytes (issue 18, finding 7)', () => {
  it('73 bytes is 400, counted in UTF-8 bytes rather than characters; 72 bytes registers and logs in', async () => {
    const ascii73 = `Aa1${'x'.repeat(70)}`;
    const res = await gateway()
      .post('/auth/register')
      .send(newUser({ password: ascii73 }));
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual(['password: must be at most 72 bytes in UTF-8']);
    // 38 characters, 74 bytes: bcrypt would silently drop the end.
    expectEnvelope(
      await gateway()
        .post('/auth/register')
        .send(newUser({ password: `a1${'ü'.repeat(36)}` })),
      400,
    );

    const body = newUser({ password: `Aa1${'x'.repeat(69)}` });
    expect((await gateway().post('/auth/register').send(body)).status).toBe(200);
    expect((await gateway().post('/auth/login').send({ email: body.email, password: body.password, deviceId: 'long' })).status).toBe(200);
  });
});
