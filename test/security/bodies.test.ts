/**
 * Oversized and inflated bodies through the gateway (issue 8, item 4): over 1 MiB is 413 on every
 * kind of route (JSON, the raw webhook, GraphQL), declared or chunked, and after decompression too;
 * just under the limit is read.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { adminSession, expectEnvelope, newUser, registeredUser } from '../harness';
import { send, startSystem, type Answer, type System } from '../hostile';

let system: System;
let admin: Awaited<ReturnType<typeof adminSession>>;
let buyer: Awaited<ReturnType<typeof registeredUser>>;

beforeAll(async () => {
  system = await startSystem();
  admin = await adminSession(system.stack);
  buyer = await registeredUser(system.stack);
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

const MIB = 1024 * 1024;

/** A JSON object of exactly `bytes` bytes: the route's fields plus one long string. */
function jsonOfSize(bytes: number, fields: Record<string, unknown> = {}): string {
  const shell = JSON.stringify({ ...fields, padding: '' });
  return JSON.stringify({ ...fields, padding: 'x'.repeat(bytes - Buffer.byteLength(shell)) });
}

/** Sends the body in 64 KiB chunks without a Content-Length (Transfer-Encoding: chunked). */
function sendChunked(path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  const { hostname, port } = new URL(system.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method: 'POST', path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: JSON.parse(text) as unknown });
      });
    });
    // The server may answer 413 and close before the whole body is written.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    for (let offset = 0; offset < body.length; offset += 64 * 1024) req.write(body.subarray(offset, offset + 64 * 1024));
    req.end();
  });
}

function expectTooLarge(answer: Answer): void {
  expectEnvelope(answer);
  expect(answer.status).toBe(413);
}

const ROUTES: { name: string; path: string; bearer?: () => string; fields?: () => Record<string, unknown> }[] = [
  { name: 'register', path: '/auth/register', fields: () => newUser() },
  { name: 'login', path: '/auth/login', fields: () => ({ email: buyer.email, password: buyer.password, deviceId: 'd' }) },
  { name: 'book create', path: '/api/books/create', bearer: () => admin.bearer },
  { name: 'batch', path: '/api/books/batch', bearer: () => admin.bearer },
  { name: 'checkout', path: '/api/payments/checkout', bearer: () => buyer.bearer },
  { name: 'webhook (raw body)', path: '/api/payments/webhook' },
];

describe('a body over 1 MiB through the gateway', () => {
  it.each(ROUTES.map((route) => [route.name, route] as const))('%s: 413 envelope, declared or chunked, plain or gzip-inflated', async (_name, route) => {
    const headers = { 'Content-Type': 'application/json', 'Stripe-Signature': 't=1,v1=00', ...(route.bearer ? { Authorization: route.bearer() } : {}) };
    const body = jsonOfSize(MIB + 1, route.fields?.());
    expectTooLarge(await send(system.url, { method: 'POST', path: route.path, headers, body }));
    expectTooLarge(await send(system.url, { method: 'POST', path: route.path, headers, body: 'x'.repeat(3 * MIB) }));
    expectTooLarge(await sendChunked(route.path, headers, Buffer.from(jsonOfSize(2 * MIB, route.fields?.()))));
    // 8 MiB that compress to a few KiB: the limit applies to what the body inflates to.
    const bomb = zlib.gzipSync(jsonOfSize(8 * MIB, route.fields?.()));
    expect(bomb.length).toBeLessThan(64 * 1024);
    expectTooLarge(await send(system.url, { method: 'POST', path: route.path, headers: { ...headers, 'Content-Encoding': 'gzip' }, body: bomb }));
  });

  it('GraphQL: 413 with a GraphQL error, declared or chunked', async () => {
    const headers = { 'Content-Type': 'application/json', Authorization: admin.bearer };
    const query = JSON.stringify({ query: `{ books(q: "${'x'.repeat(MIB)}") { id } }` });
    for (const answer of [await send(system.url, { method: 'POST', path: '/graphql', headers, body: query }), await sendChunked('/graphql', headers, Buffer.from(query))]) {
      expect(answer.status).toBe(413);
      expect(answer.json).toEqual({ errors: [{ message: 'Request body exceeds the 1mb limit', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
    }
  });

  it('just under 1 MiB is read: the route answers about the content, not the size', async () => {
    const register = await send(system.url, { method: 'POST', path: '/auth/register', headers: { 'Content-Type': 'application/json' }, body: jsonOfSize(MIB - 64, newUser()) });
    expect(register.status).toBe(200);
    const checkout = await send(system.url, {
      method: 'POST',
      path: '/api/payments/checkout',
      headers: { 'Content-Type': 'application/json', Authorization: buyer.bearer },
      body: jsonOfSize(MIB - 64),
    });
    expectEnvelope(checkout);
    expect(checkout.status).toBe(400);
  });

  it('leaves every service up', async () => {
    const health = await send(system.url, { method: 'GET', path: '/actuator/health' });
    expect([health.status, (health.json as { status: string }).status]).toEqual([200, 'UP']);
  });
});
