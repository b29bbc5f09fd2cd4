/**
 * Secrets never in responses or logs (issue 8, item 4). The whole system runs at LOG_LEVEL=debug
 * into a log kept in memory; a register / login / refresh / checkout / webhook / logout flow goes
 * through the gateway, REST and GraphQL, failures included; then the log and every answer are
 * searched for the passwords, refresh and access tokens, the Stripe secret key, the webhook secret,
 * the internal API key, the signing key, the client secrets and the bcrypt hashes. Answers may carry
 * only what the contract returns: tokens in the login and refresh answers, a payment's client
 * secret in its owner's payment answers.
 */
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Account } from '../../subgraphs/auth/entities';
import { createBook } from '../commerce';
import { adminSession, INTERNAL_KEY, newUser, waitFor, WEBHOOK_SECRET } from '../harness';
import { captureLog, send, startSystem, type Answer, type System } from '../hostile';

const log = captureLog('debug');
let system: System;

/** Every answer of the flow, named by the request that got it. */
const answers: { request: string; answer: Answer }[] = [];

async function call(method: string, path: string, options: { bearer?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(options.bearer ? { Authorization: `Bearer ${options.bearer}` } : {}), ...options.headers };
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const answer = await send(system.url, { method, path, headers, body });
  answers.push({ request: `${method} ${path}`, answer });
  return answer;
}

const graphql = (bearer: string, query: string, variables: Record<string, unknown> = {}) => call('POST', '/graphql', { bearer, body: { query, variables } });

interface Secrets {
  passwords: string[];
  refreshTokens: string[];
  accessTokens: string[];
  clientSecrets: string[];
  hashes: string[];
  keys: string[];
}
const secrets: Secrets = { passwords: [], refreshTokens: [], accessTokens: [], clientSecrets: [], hashes: [], keys: [] };
let paymentPath: string;

beforeAll(async () => {
  system = await startSystem({ logger: log.logger, env: { LOG_LEVEL: 'debug' } });
  const admin = await adminSession(system.stack);
  const book = await createBook(system.stack, admin.bearer, 'Secret History', 18.5);
  const reader = newUser({ password: 'Correct-Horse-7-Battery' });
  secrets.passwords.push(reader.password, 'Never-Stored-Pass-9', 'Wrong-Guess-42', system.stack.admin.password);

  // Registration, a refused one that carries a password, a wrong and a right login.
  const registered = await call('POST', '/auth/register', { body: reader });
  expect(registered.status).toBe(200);
  const userId = (registered.json as { userId: string }).userId;
  expect((await call('POST', '/auth/register', { body: { ...newUser(), email: 'not-an-email', password: 'Never-Stored-Pass-9' } })).status).toBe(400);
  expect((await call('POST', '/auth/login', { body: { email: reader.email, password: 'Wrong-Guess-42', deviceId: 'laptop' } })).status).toBe(401);
  const first = await call('POST', '/auth/login', { body: { email: reader.email, password: reader.password, deviceId: 'laptop' } });
  const second = await call('POST', '/auth/login', { body: { email: reader.email, password: reader.password, deviceId: 'phone' } });
  const adminLogin = await call('POST', '/auth/login', { body: { email: system.stack.admin.email, password: system.stack.admin.password, deviceId: 'desk' } });
  const tokens = [first, second, adminLogin].map((answer) => answer.json as { accessToken: string; refreshToken: string });
  const refreshed = await call('POST', '/auth/refresh', { body: { refreshToken: tokens[0].refreshToken } });
  const rotated = refreshed.json as { accessToken: string; refreshToken: string };
  for (const pair of [...tokens, rotated]) {
    secrets.accessTokens.push(pair.accessToken);
    secrets.refreshTokens.push(pair.refreshToken);
  }
  const [access, adminAccess] = [rotated.accessToken, tokens[2].accessToken];

  // Reads, a checkout, the payment by the simulator's signed webhook, and the reads after it.
  await call('GET', `/api/user/${userId}`, { bearer: access });
  const checkout = await call('POST', '/api/payments/checkout', { bearer: access, body: { checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 2 }] } });
  expect(checkout.status).toBe(200);
  const payment = checkout.json as { paymentId: string; paymentIntentId: string; clientSecret: string };
  secrets.clientSecrets.push(payment.clientSecret);
  paymentPath = `/api/payments/${payment.paymentId}`;
  await system.stack.stripe!.confirm(payment.paymentIntentId);
  await waitFor(async () => ((await call('GET', paymentPath, { bearer: access })).json as { orderId?: string }).orderId, { what: 'the paid order' });
  await call('GET', '/api/payments', { bearer: access });
  await call('GET', '/api/orders/me', { bearer: access });
  await call('GET', `/api/orders/payment/${payment.paymentId}`, { bearer: access });
  await graphql(access, 'query ($id: ID!) { me { email payments { paymentId paymentIntentId amount } } payment(paymentId: $id) { paymentIntentId order { orderId } } }', {
    id: payment.paymentId,
  });
  await call('GET', '/analytics/dashboard', { bearer: adminAccess });
  await call('GET', '/api/user/', { bearer: adminAccess });
  await call('GET', `/api/user/search?keyword=${encodeURIComponent(reader.email)}`, { bearer: adminAccess });
  await graphql(adminAccess, 'query ($id: ID!) { user(userId: $id) { email payments { paymentIntentId status } orders { orderId } } }', { id: userId });

  // A forged webhook, an outside call with the internal key, logouts and a refused refresh.
  await call('POST', '/api/payments/webhook', { body: '{"id":"evt_forged","type":"payment_intent.succeeded"}', headers: { 'Stripe-Signature': 't=1,v1=00' } });
  await call('POST', '/api/user/create', { body: { userId: randomUUID() }, headers: { 'X-Internal-Api-Key': INTERNAL_KEY } });
  await call('POST', '/auth/logout', { body: { refreshToken: rotated.refreshToken } });
  await call('POST', '/auth/logout-all', { bearer: tokens[1].accessToken });
  expect((await call('POST', '/auth/refresh', { body: { refreshToken: rotated.refreshToken } })).status).toBe(401);

  const accounts = await system.stack.auth.db.manager.find(Account);
  secrets.hashes.push(...accounts.map((account) => account.passwordHash));
  const pem = fs.readFileSync(system.stack.config.jwt.privateKeyFile, 'utf8');
  secrets.keys.push(
    system.stack.config.stripe.secretKey!,
    WEBHOOK_SECRET,
    INTERNAL_KEY,
    ...pem
      .split('\n')
      .filter((line) => line.length === 64)
      .slice(0, 3),
  );
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

/** Each secret with a name, and its parts that are secret on their own (a JWT's signature). */
function named(kind: keyof Secrets): [string, string][] {
  return secrets[kind].flatMap((value, index) => {
    const name = `${kind}[${index}]`;
    const parts: [string, string][] = [[name, value]];
    if (kind === 'accessTokens') parts.push([`${name} signature`, value.split('.')[2]]);
    return parts;
  });
}

const ALL_KINDS: (keyof Secrets)[] = ['passwords', 'refreshTokens', 'accessTokens', 'clientSecrets', 'hashes', 'keys'];

describe('the log of the whole flow at debug level', () => {
  it('was written by every service and holds the flow (so the search below means something)', () => {
    const text = log.lines.join('');
    for (const service of ['auth', 'user', 'book', 'order', 'payment', 'analytics', 'gateway']) expect(text).toContain(`"service":"${service}"`);
    for (const event of ['account registered', 'checkout created', 'payment intent succeeded', 'provider event received', 'order created', 'webhook delivered'])
      expect(text).toContain(event);
    expect(log.entriesAtLeast(20).some((entry) => entry.level === 20)).toBe(true);
  });

  it.each(ALL_KINDS)('holds none of the %s', (kind) => {
    const text = log.lines.join('');
    const found = named(kind).filter(([, value]) => text.includes(value));
    expect(found.map(([name]) => name)).toEqual([]);
  });
});

describe('every answer of the flow', () => {
  const where = (value: string) => answers.filter(({ answer }) => answer.text.includes(value) || JSON.stringify(answer.headers).includes(value)).map(({ request }) => request);

  it('holds no password, hash, Stripe key, webhook secret, internal key or signing key', () => {
    for (const kind of ['passwords', 'hashes', 'keys'] as const) {
      const found = named(kind)
        .map(([name, value]) => [name, where(value)])
        .filter(([, requests]) => requests.length > 0);
      expect(found).toEqual([]);
    }
  });

  it('holds each token only in the login or refresh answer that issued it', () => {
    for (const kind of ['refreshTokens', 'accessTokens'] as const) {
      for (const [name, value] of named(kind)) {
        const requests = where(value);
        expect({ name, requests }).toEqual({ name, requests: [expect.stringMatching(/^POST \/auth\/(login|refresh)$/)] });
      }
    }
  });

  it("holds the client secret only in its owner's checkout and payment answers", () => {
    const requests = where(secrets.clientSecrets[0]);
    expect(requests.length).toBeGreaterThan(0);
    expect([...new Set(requests)].sort()).toEqual(['GET /api/payments', `GET ${paymentPath}`, 'POST /api/payments/checkout'].sort());
  });
});
