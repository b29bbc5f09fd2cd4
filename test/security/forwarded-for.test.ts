/**
 * Forwarded headers believed only from the gateway (issue 18, finding 3). With the defaults of
 * `npm start` (GATEWAY_ADDRESSES loopback, no TRUST_PROXY), a client on the loopback interface used
 * to name any address in X-Forwarded-For, through the gateway or straight at the auth service, and
 * so got a fresh login budget per request: 50 wrong logins, no 429. Now each client is the address
 * it connects from, and the per-client limit (the default 20 a window) applies.
 */
import { ConfigError, loadConfig } from '../../platform/config';
import { addressMatcher } from '../../platform/forwarded';
import { registeredUser } from '../harness';
import { send, startSystem, type Answer, type System } from '../hostile';

// Fifty logins one after the other, a bcrypt compare for each of those answered: slow on a loaded machine.
jest.setTimeout(120_000);

const ATTEMPTS = 50;
const LIMIT = 20;
let system: System;
let victim: Awaited<ReturnType<typeof registeredUser>>;

beforeAll(async () => {
  // The per-account throttle (test/security/sessions.test.ts) is set out of reach: what is measured here is the per-client limit.
  system = await startSystem({ env: { AUTH_RATE_LIMIT_MAX: String(LIMIT), AUTH_RATE_LIMIT_WINDOW_MS: '600000', LOGIN_THROTTLE_MAX_FAILURES: '1000' } });
  victim = await registeredUser(system.stack);
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

/** A wrong login for the victim, claiming to come from another address each time. */
function wrongLogin(base: string, from: string, attempt: number, extra: Record<string, string> = {}): Promise<Answer> {
  return send(base, {
    method: 'POST',
    path: '/auth/login',
    localAddress: from,
    headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': `198.51.${attempt % 250}.${(attempt * 7) % 250}`, 'X-Real-IP': `203.0.113.${attempt}`, ...extra },
    body: JSON.stringify({ email: victim.email, password: 'Wrong-Password-1', deviceId: 'rotating' }),
  });
}

async function statuses(send50: (attempt: number) => Promise<Answer>): Promise<number[]> {
  const seen: number[] = [];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) seen.push((await send50(attempt)).status);
  return seen;
}

const counts = (seen: number[]) => ({ 401: seen.filter((s) => s === 401).length, 429: seen.filter((s) => s === 429).length });

describe(`${ATTEMPTS} wrong logins with a rotating X-Forwarded-For`, () => {
  it('through the gateway, from loopback: at most 20 are answered, then only 429', async () => {
    // 127.0.0.1 is where this test logged the victim in too, so its budget is not whole.
    const seen = await statuses((attempt) => wrongLogin(system.url, '127.0.0.1', attempt));
    const first429 = seen.indexOf(429);
    expect(first429).toBeGreaterThan(0);
    expect(first429).toBeLessThanOrEqual(LIMIT);
    expect(seen.slice(0, first429).every((status) => status === 401)).toBe(true);
    expect(seen.slice(first429).every((status) => status === 429)).toBe(true);
  });

  it("straight at the auth service's port, from loopback: the same", async () => {
    expect(counts(await statuses((attempt) => wrongLogin(system.stack.urls.auth, '127.0.0.7', attempt)))).toEqual({ 401: LIMIT, 429: ATTEMPTS - LIMIT });
  });

  it('straight at the auth service, with a forged gateway proof: the same', async () => {
    const forged = { 'X-Gateway-Proof': Buffer.from('x'.repeat(32)).toString('base64url') };
    expect(counts(await statuses((attempt) => wrongLogin(system.stack.urls.auth, '127.0.0.8', attempt, forged)))).toEqual({ 401: LIMIT, 429: ATTEMPTS - LIMIT });
  });

  it('the victim, from its own address, still logs in', async () => {
    const answer = await send(system.url, {
      method: 'POST',
      path: '/auth/login',
      localAddress: '127.0.0.9',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: victim.email, password: victim.password, deviceId: 'own' }),
    });
    expect(answer.status).toBe(200);
  });
});

describe('the address lists (GATEWAY_ADDRESSES, TRUST_PROXY)', () => {
  it('match addresses, CIDR ranges and the named ranges, IPv4-mapped IPv6 included', () => {
    const matches = addressMatcher(['172.30.80.10', '10.1.0.0/16', 'loopback']);
    expect(['172.30.80.10', '::ffff:172.30.80.10', '10.1.200.3', '127.0.0.5', '::1'].map(matches)).toEqual([true, true, true, true, true]);
    expect(['172.30.80.11', '10.2.0.1', '192.168.1.1', '2001:db8::1', undefined].map(matches)).toEqual([false, false, false, false, false]);
  });

  it('refuse anything else at start, naming the variable', () => {
    for (const name of ['GATEWAY_ADDRESSES', 'TRUST_PROXY']) {
      for (const bad of ['gateway', '10.0.0.0/33', '*', 'true']) {
        expect(() => loadConfig({ INTERNAL_API_KEY: 'k', [name]: bad })).toThrow(ConfigError);
        expect(() => loadConfig({ INTERNAL_API_KEY: 'k', [name]: bad })).toThrow(new RegExp(`^${name} must list`));
      }
    }
    expect(loadConfig({ INTERNAL_API_KEY: 'k' }).trustProxy).toMatchObject({ gatewayAddresses: ['loopback'], frontProxies: [] });
  });
});
