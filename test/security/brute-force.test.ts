/**
 * Brute-force login through the gateway (issue 8, item 4): past the limit a client gets 429 with
 * Retry-After, whatever it claims in X-Forwarded-For, while other clients and other routes keep their
 * own budgets.
 *
 * How the client is known (platform/forwarded.ts): the gateway sets X-Forwarded-For to the address
 * it was connected from, keeping what came before only from a proxy TRUST_PROXY names (here
 * 127.0.0.1), and the auth service believes it only from the gateway. The clients connect from other
 * loopback addresses (127.0.0.2, ...), as clients on other hosts would: so what a client writes in
 * X-Forwarded-For is never taken for its address.
 */
import { expectEnvelope, registeredUser } from '../harness';
import { send, startSystem, type Answer, type System } from '../hostile';

const LIMIT = 5;
let system: System;
let victim: Awaited<ReturnType<typeof registeredUser>>;

beforeAll(async () => {
  system = await startSystem({ env: { AUTH_RATE_LIMIT_MAX: String(LIMIT), AUTH_RATE_LIMIT_WINDOW_MS: '600000', TRUST_PROXY: '127.0.0.1' } });
  victim = await registeredUser(system.stack);
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

function attempt(from: string, path: string, body: unknown, forwardedFor?: string, base = system.url): Promise<Answer> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(forwardedFor ? { 'X-Forwarded-For': forwardedFor } : {}) };
  return send(base, { method: 'POST', path, headers, body: JSON.stringify(body), localAddress: from });
}

const wrongLogin = { email: '', password: 'Not-The-Password-1', deviceId: 'brute' };
const login = (password: string) => ({ ...wrongLogin, email: victim.email, password });

function expectTooMany(answer: Answer): void {
  expectEnvelope(answer);
  expect([answer.status, (answer.json as { message: string }).message]).toEqual([429, 'Too many attempts; try again later']);
  expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(600);
}

describe('login attempts through the gateway', () => {
  it(`are answered until the limit (${LIMIT}), then 429 with Retry-After, even when each claims another X-Forwarded-For`, async () => {
    for (let i = 1; i <= LIMIT; i += 1) {
      const answer = await attempt('127.0.0.2', '/auth/login', login('Wrong-Password-1'), `203.0.113.${i}`);
      expect([i, answer.status]).toEqual([i, 401]);
    }
    expectTooMany(await attempt('127.0.0.2', '/auth/login', login('Wrong-Password-1'), '198.51.100.7'));
    expectTooMany(await attempt('127.0.0.2', '/auth/login', login('Wrong-Password-1'), '127.0.0.1'));
    expectTooMany(await attempt('127.0.0.2', '/auth/login', login('Wrong-Password-1'), '127.0.0.3, 127.0.0.1'));
    // The right password does not get through either while the client is limited.
    expectTooMany(await attempt('127.0.0.2', '/auth/login', login(victim.password)));
  });

  it('from another client: its own budget, so the victim can still log in', async () => {
    expect((await attempt('127.0.0.3', '/auth/login', login('Wrong-Password-1'))).status).toBe(401);
    expect((await attempt('127.0.0.3', '/auth/login', login(victim.password))).status).toBe(200);
  });

  it('on another route (refresh): the limited client has a separate budget', async () => {
    const answer = await attempt('127.0.0.2', '/auth/refresh', { refreshToken: 'x'.repeat(43) });
    expectEnvelope(answer);
    expect(answer.status).toBe(401);
  });

  it('registrations are limited the same way', async () => {
    for (let i = 1; i <= LIMIT; i += 1) expect((await attempt('127.0.0.4', '/auth/register', { email: 'not-an-email' }, `192.0.2.${i}`)).status).toBe(400);
    expectTooMany(await attempt('127.0.0.4', '/auth/register', { email: 'not-an-email' }, '192.0.2.99'));
  });
});

describe('login attempts straight at the auth service', () => {
  it('from an untrusted peer: its X-Forwarded-For is ignored and it is limited by its own address', async () => {
    for (let i = 1; i <= LIMIT; i += 1) {
      expect((await attempt('127.0.0.5', '/auth/login', login('Wrong-Password-1'), `203.0.113.${i}`, system.stack.urls.auth)).status).toBe(401);
    }
    expectTooMany(await attempt('127.0.0.5', '/auth/login', login('Wrong-Password-1'), '198.51.100.8', system.stack.urls.auth));
  });
});
