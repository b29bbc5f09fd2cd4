import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import request from 'supertest';
import { gatewayProof } from '../../platform/forwarded';
import { adminSession, expectEnvelope, INTERNAL_KEY, login, newUser, registeredUser, startStack, UUID, type Stack } from '../../test/harness';
import { claimsOf } from '../../test/jwt';
import { Account, Session } from './entities';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const auth = () => request(stack.urls.auth);
const CHROME_ON_MACOS = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

const accountsWithEmail = (email: string) => stack.auth.db.manager.count(Account, { where: { email: email.toLowerCase() } });

/** A URL on which nothing listens: a port this process bound and released. */
async function closedPortUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Registers `body` while the auth service reaches the user service at `userUrl`, then restores the real one. */
async function registerWithUserServiceAt(userUrl: string, body: Record<string, unknown>): Promise<request.Response> {
  const realUserUrl = stack.config.urls.user;
  stack.config.urls.user = userUrl;
  try {
    return await auth().post('/auth/register').send(body);
  } finally {
    stack.config.urls.user = realUserUrl;
  }
}

describe('registration while the user service is unavailable', () => {
  it('answers 503 and leaves no account when the user service is down; the email can register later', async () => {
    const body = newUser();
    const res = await registerWithUserServiceAt(await closedPortUrl(), body);
    expectEnvelope(res, 503, 'The user service is unavailable');
    expect(await accountsWithEmail(body.email)).toBe(0);
    expectEnvelope(await auth().post('/auth/login').send({ email: body.email, password: body.password, deviceId: 'd' }), 401, 'Invalid email or password.');

    const retry = await auth().post('/auth/register').send(body);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ userId: expect.stringMatching(UUID), email: body.email, message: 'User registered successfully' });
    const tokens = await login(stack.urls.auth, body.email, body.password);
    const profile = await request(stack.urls.user).get(`/api/user/${retry.body.userId}`).set('Authorization', `Bearer ${tokens.accessToken}`);
    expect(profile.status).toBe(200);
    expect(profile.body.email).toBe(body.email);
  });

  it('answers 503 and leaves no account when the user service refuses to create the profile', async () => {
    const failing = http.createServer((_req, res) => {
      res.statusCode = 500;
      res.end('{"status":500}');
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    const body = newUser();
    try {
      const res = await registerWithUserServiceAt(`http://127.0.0.1:${(failing.address() as AddressInfo).port}`, body);
      expectEnvelope(res, 503);
    } finally {
      await new Promise<void>((resolve) => failing.close(() => resolve()));
    }
    expect(await accountsWithEmail(body.email)).toBe(0);
    expect((await auth().post('/auth/register').send(body)).status).toBe(200);
    expect(await accountsWithEmail(body.email)).toBe(1);
  });
});

/**
 * A user service whose answers to auth come too late: each create is handed to `deliver`, which
 * decides when the real user service sees it, and auth never gets an answer: it gives up at its
 * timeout. A failed forward shows as a missing status in what `deliver` records.
 */
async function lateUserService(realUserUrl: string, deliver: (forward: () => Promise<number>) => Promise<void>) {
  const creates: { userId: string }[] = [];
  const hold = async (req: http.IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    creates.push(JSON.parse(body.toString()) as { userId: string });
    const headers = { 'content-type': 'application/json', 'x-internal-api-key': INTERNAL_KEY };
    await deliver(async () => (await fetch(`${realUserUrl}${req.url}`, { method: req.method, headers, body })).status);
  };
  const server = http.createServer((req) => {
    hold(req).catch(() => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    creates,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a registration whose profile was created but answered too late (REGISTRATION_PROFILE_TIMEOUT_MS=2000)', () => {
  let slow: Stack;
  beforeAll(async () => {
    slow = await startStack({ env: { REGISTRATION_PROFILE_TIMEOUT_MS: '2000' } });
  });
  afterAll(async () => {
    await slow?.stop();
  });

  async function registerThrough(userUrl: string, body: Record<string, unknown>): Promise<request.Response> {
    const realUserUrl = slow.config.urls.user;
    slow.config.urls.user = userUrl;
    try {
      return await request(slow.urls.auth).post('/auth/register').send(body);
    } finally {
      slow.config.urls.user = realUserUrl;
    }
  }

  /** Every profile with `email`, as the admin finds it. */
  async function profilesWithEmail(email: string): Promise<{ userId: string; email: string }[]> {
    const admin = await adminSession(slow);
    const found = await request(slow.urls.user).get('/api/user/search').query({ keyword: email }).set('Authorization', admin.bearer);
    expect(found.status).toBe(200);
    return (found.body as { userId: string; email: string }[]).filter((profile) => profile.email === email);
  }

  it('answers 503, then the same registration succeeds: one profile, under the new account, and login works', async () => {
    const committed: number[] = [];
    const committedLate = await lateUserService(slow.config.urls.user, async (forward) => {
      committed.push(await forward());
    });
    const body = newUser();
    try {
      expectEnvelope(await registerThrough(committedLate.url, body), 503);
    } finally {
      await committedLate.close();
    }
    const [abandoned] = committedLate.creates;
    expect(committed).toEqual([200]);
    expect(await profilesWithEmail(body.email)).toEqual([expect.objectContaining({ userId: abandoned.userId })]);
    expect(await slow.auth.db.manager.count(Account, { where: { email: body.email } })).toBe(0);

    const retry = await request(slow.urls.auth).post('/auth/register').send(body);
    expect(retry.status).toBe(200);
    expect(retry.body.userId).not.toBe(abandoned.userId);
    const tokens = await login(slow.urls.auth, body.email, body.password);
    expect(claimsOf(tokens.accessToken).sub).toBe(retry.body.userId);
    expect(await profilesWithEmail(body.email)).toEqual([expect.objectContaining({ userId: retry.body.userId, email: body.email })]);
    const own = await request(slow.urls.user).get(`/api/user/${retry.body.userId}`).set('Authorization', `Bearer ${tokens.accessToken}`);
    expect(own.status).toBe(200);
  });

  it('a first attempt whose create lands only after the retry succeeded is refused and removes nothing', async () => {
    let deliverLate!: () => Promise<number>;
    const heldBack = await lateUserService(slow.config.urls.user, async (forward) => {
      deliverLate = forward;
    });
    const body = newUser();
    try {
      expectEnvelope(await registerThrough(heldBack.url, body), 503);
    } finally {
      await heldBack.close();
    }
    const retry = await request(slow.urls.auth).post('/auth/register').send(body);
    expect(retry.status).toBe(200);

    expect(await deliverLate()).toBe(409);
    expect(await profilesWithEmail(body.email)).toEqual([expect.objectContaining({ userId: retry.body.userId })]);
    expect(claimsOf((await login(slow.urls.auth, body.email, body.password)).accessToken).sub).toBe(retry.body.userId);
  });
});

describe('session device names', () => {
  it('stores "Chrome on macOS" for a Chrome-on-macOS User-Agent', async () => {
    const user = await registeredUser(stack);
    const res = await auth().post('/auth/login').set('User-Agent', CHROME_ON_MACOS).send({ email: user.email, password: user.password, deviceId: 'mac-1' });
    expect(res.status).toBe(200);
    const sessions = await stack.auth.db.manager.find(Session, { where: { userId: user.userId, deviceId: 'mac-1' } });
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ deviceName: 'Chrome on macOS', revokedAt: null });
  });

  it('stores "Unknown device" without a User-Agent', async () => {
    const user = await registeredUser(stack);
    const res = await auth().post('/auth/login').send({ email: user.email, password: user.password, deviceId: 'bare-client' });
    expect(res.status).toBe(200);
    const sessions = await stack.auth.db.manager.find(Session, { where: { userId: user.userId, deviceId: 'bare-client' } });
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ deviceName: 'Unknown device', revokedAt: null });
  });
});

describe('the bootstrap admin', () => {
  it('logs in on first start with an ADMIN token and has a profile', async () => {
    const admin = await adminSession(stack);
    expect(claimsOf(admin.tokens.accessToken)).toMatchObject({ sub: expect.stringMatching(UUID), role: 'ADMIN', email: stack.admin.email.toLowerCase() });
    const everyone = await request(stack.urls.user).get('/api/user/').set('Authorization', admin.bearer);
    expect(everyone.status).toBe(200);
    const profile = await request(stack.urls.user).get(`/api/user/${admin.userId}`).set('Authorization', admin.bearer);
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({ userId: admin.userId, email: stack.admin.email.toLowerCase() });
    const account = await stack.auth.db.manager.findOneByOrFail(Account, { id: admin.userId });
    expect(account).toMatchObject({ role: 'ADMIN', status: 'ACTIVE' });
  });

  it('is created once: ensuring it again creates nothing', async () => {
    expect(await stack.auth.auth.ensureAdmin(stack.admin.email, stack.admin.password)).toBe(false);
    expect(await accountsWithEmail(stack.admin.email)).toBe(1);
    expectEnvelope(
      await auth()
        .post('/auth/register')
        .send(newUser({ email: stack.admin.email })),
      409,
    );
  });

  it('is never given by registration, even when the body asks for it', async () => {
    const body = newUser({ role: 'ADMIN' });
    const res = await auth().post('/auth/register').send(body);
    expect(res.status).toBe(200);
    const tokens = await login(stack.urls.auth, body.email, body.password);
    expect(claimsOf(tokens.accessToken)).toMatchObject({ sub: res.body.userId, role: 'USER' });
    expect(await stack.auth.db.manager.findOneByOrFail(Account, { id: res.body.userId })).toMatchObject({ role: 'USER' });
    expectEnvelope(await request(stack.urls.user).get('/api/user/').set('Authorization', `Bearer ${tokens.accessToken}`), 403);
  });
});

describe('rate limits (AUTH_RATE_LIMIT_MAX=3)', () => {
  let limited: Stack;
  let account: { email: string; password: string };
  beforeAll(async () => {
    limited = await startStack({ env: { AUTH_RATE_LIMIT_MAX: '3' } });
    account = newUser();
    const res = await from('198.51.100.1').post('/auth/register').send(account);
    expect(res.status).toBe(200);
  });
  afterAll(async () => {
    await limited?.stop();
  });

  /** Requests from one client, as the gateway forwards them: its X-Forwarded-For with its proof, from loopback. */
  const from = (client: string) => ({
    post: (path: string) => request(limited.urls.auth).post(path).set('X-Forwarded-For', client).set('X-Gateway-Proof', gatewayProof(INTERNAL_KEY)),
  });

  function expectTooManyAttempts(res: request.Response): void {
    expectEnvelope(res, 429, 'Too many attempts; try again later');
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    const seconds = Number(res.headers['retry-after']);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
  }

  it('answers 429 with Retry-After to the 4th login attempt from one client, even with the right password', async () => {
    const client = from('203.0.113.10');
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      expectEnvelope(await client.post('/auth/login').send({ email: account.email, password: 'Wrong12345', deviceId: 'd' }), 401);
    }
    expectTooManyAttempts(await client.post('/auth/login').send({ email: account.email, password: account.password, deviceId: 'd' }));

    const otherClient = await from('203.0.113.11').post('/auth/login').send({ email: account.email, password: account.password, deviceId: 'd' });
    expect(otherClient.status).toBe(200);
  });

  it('answers 429 to the 4th registration from one client, creating no account', async () => {
    const client = from('203.0.113.20');
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      expect((await client.post('/auth/register').send(newUser())).status).toBe(200);
    }
    const fourth = newUser();
    expectTooManyAttempts(await client.post('/auth/register').send(fourth));
    expect(await limited.auth.db.manager.count(Account, { where: { email: fourth.email } })).toBe(0);
  });

  it('answers 429 to the 4th refresh from one client, leaving the presented token unused', async () => {
    const tokens = (await from('203.0.113.31').post('/auth/login').send({ email: account.email, password: account.password, deviceId: 'refresh' })).body as {
      refreshToken: string;
    };
    const client = from('203.0.113.30');
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      expectEnvelope(await client.post('/auth/refresh').send({ refreshToken: `made-up-${attempt}` }), 401);
    }
    expectTooManyAttempts(await client.post('/auth/refresh').send({ refreshToken: tokens.refreshToken }));
    expect((await from('203.0.113.32').post('/auth/refresh').send({ refreshToken: tokens.refreshToken })).status).toBe(200);
  });

  it('does not limit logout', async () => {
    const client = from('203.0.113.40');
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      expect((await client.post('/auth/logout').send({ refreshToken: `unknown-${attempt}` })).status).toBe(204);
    }
  });
});
