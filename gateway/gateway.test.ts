import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import request from 'supertest';
import { ConfigError, loadConfig, type Config } from '../platform/config';
import { rawRequest, startGateway, type RunningGateway } from '../test/gateway';
import { send } from '../test/hostile';
import { expectEnvelope, notUnderContract, startStack, UUID, waitFor, type Stack } from '../test/harness';
import { canonicalPath, upstreamFor } from './proxy-routes';

const SHOP = 'https://shop.example';

let stack: Stack;
let gateway: RunningGateway;
const extra: RunningGateway[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['book'], env: { CORS_ORIGINS: SHOP, AUTH_RATE_LIMIT_MAX: '3' } });
  gateway = await startGateway(stack.config, { healthChecks: ['auth', 'user', 'book'] });
}, 60_000);
afterAll(async () => {
  await Promise.all([gateway, ...extra].map((g) => g?.stop()));
  await stack?.stop();
});

const via = () => request(gateway.url);

/** Another gateway over the same stack, with some settings changed; stopped after the file. */
async function gatewayWith(config: Partial<Config>, options: Parameters<typeof startGateway>[1] = {}): Promise<RunningGateway> {
  const started = await startGateway({ ...stack.config, ...config }, options);
  extra.push(started);
  return started;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * An upstream that records what reaches it and answers with a recognisable response, to see exactly
 * what the gateway forwards (the real services cannot show that).
 */
async function recordingUpstream() {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(202, {
        'Content-Type': 'application/vnd.bookstore+json; charset=utf-8',
        'Retry-After': '7',
        'X-Upstream': 'recorder',
        'X-Request-Id': String(req.headers['x-request-id']),
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('what the gateway forwards', () => {
  let recorder: Awaited<ReturnType<typeof recordingUpstream>>;
  let recorded: RunningGateway;
  beforeAll(async () => {
    recorder = await recordingUpstream();
    recorded = await gatewayWith({ urls: { ...stack.config.urls, analytics: recorder.url } });
  });
  afterAll(async () => {
    await recorded.stop();
    await recorder.close();
  });

  it('passes method, path, query, headers and body bytes unchanged, adding X-Request-Id and X-Forwarded-*', async () => {
    const body = Buffer.concat([Buffer.from('{ "a" :1.50,\r\n\t"b":"é" }'), Buffer.from([0x00, 0xff, 0xfe, 0x7f])]);
    const target = '/analytics/revenue/daily?from=2026-01-01&to=2026-01-31&q=a%20b&q=c';
    const res = await rawRequest(
      recorded.url,
      'POST',
      target,
      { 'Content-Type': 'application/octet-stream', Authorization: 'Bearer token-value', 'Stripe-Signature': 't=1,v1=abc' },
      body,
    );

    const [seen] = recorder.received.splice(0);
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe(target);
    expect(seen.body.equals(body)).toBe(true);
    expect(seen.headers).toMatchObject({
      'content-type': 'application/octet-stream',
      authorization: 'Bearer token-value',
      'stripe-signature': 't=1,v1=abc',
      'x-request-id': expect.stringMatching(UUID),
      'x-forwarded-for': expect.stringMatching(/127\.0\.0\.1$/),
      'x-forwarded-proto': 'http',
      'x-forwarded-host': new URL(recorded.url).host,
      host: new URL(recorder.url).host,
    });
    // The answer comes back as the upstream gave it, with the id the upstream received.
    expect(res.status).toBe(202);
    expect(res.headers).toMatchObject({ 'content-type': 'application/vnd.bookstore+json; charset=utf-8', 'retry-after': '7', 'x-upstream': 'recorder' });
    expect(res.headers['x-request-id']).toBe(seen.headers['x-request-id']);
    expect(res.body.equals(body)).toBe(true);
  });

  it("keeps every value of a header the answer repeats, and leaves the connection's own headers to each side", async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const upstream = http.createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(
        200,
        [
          ['Set-Cookie', 'a=1'],
          ['Set-Cookie', 'b=2'],
          ['Vary', 'Origin'],
          ['Vary', 'Accept'],
          ['Connection', 'X-Hop'],
          ['X-Hop', 'only for this connection'],
          ['Content-Type', 'text/plain'],
        ].flat(),
      );
      res.end('ok');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    try {
      const gateway = await gatewayWith({ urls: { ...stack.config.urls, analytics: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` } });
      const res = await rawRequest(gateway.url, 'GET', '/analytics/x', {
        Connection: 'keep-alive, X-Client-Hop',
        'X-Client-Hop': 'mine',
        'Keep-Alive': 'timeout=5',
        TE: 'trailers',
      });
      expect(res.status).toBe(200);
      expect(res.body.toString()).toBe('ok');
      expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
      expect(res.headers.vary).toBe('Origin, Accept');
      expect(res.headers['x-hop']).toBeUndefined();
      expect(seen[0]).not.toHaveProperty('x-client-hop');
      expect(seen[0]).not.toHaveProperty('te');
      expect(seen[0]['keep-alive']).toBeUndefined();
    } finally {
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it('keeps a valid incoming X-Request-Id and replaces a malformed one', async () => {
    const kept = await notUnderContract(request(recorded.url).get('/analytics/dashboard'), 'the recording stub answers').set('X-Request-Id', 'order-42.retry:1');
    expect(kept.headers['x-request-id']).toBe('order-42.retry:1');
    const replaced = await notUnderContract(request(recorded.url).get('/analytics/dashboard'), 'the recording stub answers').set('X-Request-Id', 'no spaces <allowed>');
    expect(replaced.headers['x-request-id']).toMatch(UUID);
    expect(recorder.received.splice(0).map((r) => r.headers['x-request-id'])).toEqual(['order-42.retry:1', replaced.headers['x-request-id']]);
  });

  it("replaces a client's X-Forwarded-For with the address it saw, and sends the proof services believe only from it", async () => {
    await notUnderContract(request(recorded.url).get('/analytics/books'), 'the recording stub answers').set('X-Forwarded-For', '198.51.100.4').set('X-Gateway-Proof', 'forged');
    const [seen] = recorder.received.splice(0);
    expect(seen.headers['x-forwarded-for']).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(seen.headers['x-gateway-proof']).toBe(stack.config.trustProxy.proof);
  });

  it('appends to the X-Forwarded-For of a proxy in front of it that TRUST_PROXY names', async () => {
    const behindProxy = await gatewayWith({ urls: { ...stack.config.urls, analytics: recorder.url }, trustProxy: { ...stack.config.trustProxy, frontProxies: ['127.0.0.1'] } });
    await notUnderContract(request(behindProxy.url).get('/analytics/books'), 'the recording stub answers').set('X-Forwarded-For', '198.51.100.4');
    expect(recorder.received.splice(0)[0].headers['x-forwarded-for']).toMatch(/^198\.51\.100\.4, (::ffff:)?127\.0\.0\.1$/);
  });
});

describe('X-Request-Id with a real service', () => {
  it('is generated when absent and echoed by the service, and kept when valid', async () => {
    const generated = await via().get('/api/books');
    expect(generated.status).toBe(200);
    expect(generated.headers['x-request-id']).toMatch(UUID);
    const kept = await via().get('/api/books').set('X-Request-Id', 'trace-abc.123');
    expect(kept.headers['x-request-id']).toBe('trace-abc.123');
    expectEnvelope(await via().get('/nowhere').set('X-Request-Id', 'trace-404'), 404);
    expect((await via().get('/nowhere').set('X-Request-Id', 'trace-404')).headers['x-request-id']).toBe('trace-404');
  });
});

describe('rate limits per client behind the gateway', () => {
  it('tells clients apart by the address the gateway saw, whatever they write in X-Forwarded-For, and passes the 429 with Retry-After through', async () => {
    // The auth service believes the gateway's X-Forwarded-For; clients here connect from 127.0.0.2 and 127.0.0.3.
    const attempt = (client: string, claimed: string) =>
      send(gateway.url, {
        method: 'POST',
        path: '/auth/login',
        localAddress: client,
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': claimed },
        body: JSON.stringify({ email: 'nobody@example.com', password: 'Wrong12345', deviceId: 'd' }),
      });
    for (let i = 0; i < 3; i += 1) expect((await attempt('127.0.0.2', `203.0.113.${i}`)).status).toBe(401);
    const limited = await attempt('127.0.0.2', '203.0.113.99');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await attempt('127.0.0.3', '203.0.113.0')).status).toBe(401);
  });
});

describe('CORS', () => {
  it('allows a configured origin and exposes X-Request-Id', async () => {
    const res = await via().get('/api/books').set('Origin', SHOP);
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    expect(res.headers['access-control-expose-headers']).toMatch(/X-Request-Id/);
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('answers the preflight itself: 204 with the allowed methods and headers', async () => {
    const res = await via()
      .options('/api/books/create')
      .set('Origin', SHOP)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization,content-type');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    expect(res.headers['access-control-allow-methods']).toMatch(/POST/);
    expect(res.headers['access-control-allow-headers']).toMatch(/Authorization/);
    expect(res.headers['access-control-allow-headers']).toMatch(/Content-Type/);
    expect(res.headers['access-control-max-age']).toBe('600');
  });

  it('gives a foreign origin no CORS headers, on requests and preflights alike', async () => {
    const simple = await via().get('/api/books').set('Origin', 'https://evil.example');
    expect(simple.status).toBe(200);
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await via().options('/api/books/create').set('Origin', 'https://evil.example').set('Access-Control-Request-Method', 'POST');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('allows no origin by default, and any with "*"', async () => {
    const closed = await gatewayWith({ corsOrigins: [] });
    expect((await request(closed.url).get('/api/books').set('Origin', SHOP)).headers['access-control-allow-origin']).toBeUndefined();
    const open = await gatewayWith({ corsOrigins: ['*'] });
    expect((await request(open.url).get('/api/books').set('Origin', 'https://anyone.example')).headers['access-control-allow-origin']).toBe('*');
  });

  it('allows the local development origins (any port of localhost and 127.0.0.1) when asked, and only those', async () => {
    const local = await gatewayWith({ corsOrigins: [], corsAllowLocalhost: true });
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:5173', 'http://localhost:3000']) {
      const res = await request(local.url).get('/api/books').set('Origin', origin);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(res.headers['access-control-expose-headers']).toMatch(/X-Total-Count/);
      const preflight = await request(local.url).options('/api/authors/create').set('Origin', origin).set('Access-Control-Request-Method', 'POST');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(origin);
    }
    for (const origin of ['https://localhost:5173', 'http://localhost.evil.example:5173', 'http://127.0.0.2:5173', 'http://localhost']) {
      expect((await request(local.url).get('/api/books').set('Origin', origin)).headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('turns the local development origins on in the embedded default only', () => {
    expect(loadConfig({}, { embedded: true }).corsAllowLocalhost).toBe(true);
    expect(loadConfig({ INTERNAL_API_KEY: 'k' }).corsAllowLocalhost).toBe(false);
    expect(loadConfig({ CORS_ALLOW_LOCALHOST: 'false' }, { embedded: true }).corsAllowLocalhost).toBe(false);
  });

  it('reads CORS_ORIGINS as a comma-separated list of origins, failing fast on anything else', () => {
    const corsOrigins = (value?: string) => loadConfig({ INTERNAL_API_KEY: 'k', ...(value === undefined ? {} : { CORS_ORIGINS: value }) }).corsOrigins;
    expect(corsOrigins()).toEqual([]);
    expect(corsOrigins(' https://Shop.Example:443/ , http://localhost:3000,*')).toEqual(['https://shop.example', 'http://localhost:3000', '*']);
    for (const bad of ['shop.example', 'https://shop.example/app', 'ftp://shop.example', 'https://user@shop.example']) {
      expect(() => corsOrigins(bad)).toThrow(ConfigError);
    }
  });

  it('shares identical subgraph queries in flight unless GATEWAY_DEDUPLICATE_QUERIES is false', () => {
    const deduplicate = (value?: string) => loadConfig({ INTERNAL_API_KEY: 'k', ...(value === undefined ? {} : { GATEWAY_DEDUPLICATE_QUERIES: value }) }).gatewayDeduplicateQueries;
    expect(deduplicate()).toBe(true);
    expect(deduplicate('FALSE')).toBe(false);
    expect(deduplicate('true')).toBe(true);
    expect(() => deduplicate('no')).toThrow(ConfigError);
  });
});

describe('path routing', () => {
  it('routes by whole segments, ignoring case as the services do', () => {
    expect(upstreamFor('/auth')).toBe('auth');
    expect(upstreamFor('/auth/login')).toBe('auth');
    expect(upstreamFor('/authors')).toBeUndefined();
    expect(upstreamFor('/API/Books/x')).toBe('book');
    expect(upstreamFor('/api/user')).toBe('user');
    expect(upstreamFor('/api/users')).toBeUndefined();
    expect(upstreamFor('/analytics/dashboard')).toBe('analytics');
    expect(upstreamFor('/api/authors/')).toBe('book');
    expect(upstreamFor('/api/categories/create')).toBe('book');
    expect(upstreamFor('/api/publishers/x')).toBe('book');
    expect(upstreamFor('/api/authorsx')).toBeUndefined();
  });

  it('serves the catalogue prefixes of the book service through the gateway', async () => {
    for (const path of ['/api/authors/', '/api/categories/', '/api/publishers/']) {
      const res = await via().get(path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual((await request(stack.urls.book).get(path)).body);
    }
  });

  it('reads a path as leniently as any layer could', () => {
    expect(canonicalPath('/API//user/./x/..\\%2563reate;a=b/')).toBe('/api/user/create');
    expect(canonicalPath('/a/%zz/%2')).toBe('/a/%zz/%2');
    expect(canonicalPath('/../..')).toBe('/');
  });

  it('reads a plain path the same on its short way as on the long one', () => {
    const longWay = (path: string) => canonicalPath(`${path}/.`);
    fc.assert(
      fc.property(fc.stringMatching(/^(\/[A-Za-z0-9._~%;\\ -]{0,6}){1,5}\/?$/), (path) => {
        expect(canonicalPath(path)).toBe(longWay(path));
      }),
      { numRuns: 2000 },
    );
    for (const path of ['/', '/API/Books/', '/api/books/9780134685991', '/auth/internal/', '/a.b/c~d_e-f']) expect(canonicalPath(path)).toBe(longWay(path));
  });
});

describe('a service that is down or too slow', () => {
  it('answers 503 "Service unavailable: <name>" at once when the connection is refused', async () => {
    // A deadline past the test's own: the answer can only come from the refusal, not from waiting one out.
    const down = await gatewayWith({ urls: { ...stack.config.urls, analytics: `http://127.0.0.1:${await closedPort()}` } }, { upstreamTimeoutMs: 600_000 });
    const res = await request(down.url).get('/analytics/dashboard').set('X-Request-Id', 'trace-down');
    expectEnvelope(res, 503, 'Service unavailable: analytics');
    expect(res.body.path).toBe('/analytics/dashboard');
    expect(res.headers['x-request-id']).toBe('trace-down');
  });

  it('answers 503 once the deadline passes when the service accepts but never answers', async () => {
    const sockets = new Set<net.Socket>();
    const events: string[] = [];
    const silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.once('data', () => events.push('request received'));
      socket.once('close', () => events.push('connection closed'));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const slow = await gatewayWith({ urls: { ...stack.config.urls, analytics: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` } }, { upstreamTimeoutMs: 300 });
      expectEnvelope(await request(slow.url).post('/analytics/x').send({ a: 1 }), 503, 'Service unavailable: analytics');
      // The gateway waited on a request the service had received, then gave up on it itself.
      await waitFor(() => events.includes('connection closed'), { what: 'the gateway to close its connection to the silent service' });
      expect(events).toEqual(['request received', 'connection closed']);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('actuator', () => {
  it('health: UP with every checked upstream listed when all run', async () => {
    const res = await via().get('/actuator/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'UP', components: { auth: { status: 'UP' }, user: { status: 'UP' }, book: { status: 'UP' } } });
  });

  it('health: by default asks every upstream of the table, and marks one that is not there DOWN (503)', async () => {
    const urls = {
      ...stack.config.urls,
      order: `http://127.0.0.1:${await closedPort()}`,
      payment: `http://127.0.0.1:${await closedPort()}`,
      analytics: `http://127.0.0.1:${await closedPort()}`,
    };
    const partial = await gatewayWith({ urls });
    const res = await request(partial.url).get('/actuator/health');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      status: 'DOWN',
      components: {
        auth: { status: 'UP' },
        user: { status: 'UP' },
        book: { status: 'UP' },
        order: { status: 'DOWN', error: 'ECONNREFUSED' },
        payment: { status: 'DOWN', error: 'ECONNREFUSED' },
        analytics: { status: 'DOWN', error: 'ECONNREFUSED' },
      },
    });
  });

  it('info and prometheus, with request durations by upstream', async () => {
    const info = await via().get('/actuator/info');
    expect(info.status).toBe(200);
    expect(info.body.app.name).toBe('gateway');
    await via().get('/api/books');
    const metrics = await via().get('/actuator/prometheus');
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.text).toMatch(/gateway_upstream_request_duration_seconds_count\{[^}]*upstream="book"[^}]*status="200"[^}]*\} [1-9]/);
  });
});

// Last: it stops the user service of this file's stack.
describe('a stopped service', () => {
  it('gets 503 through the gateway, and health marks it DOWN', async () => {
    await stack.services.user?.stop();
    expectEnvelope(await via().get('/api/user/'), 503, 'Service unavailable: user');
    const health = await via().get('/actuator/health');
    expect(health.status).toBe(503);
    expect(health.body.status).toBe('DOWN');
    expect(health.body.components.user).toEqual({ status: 'DOWN', error: expect.any(String) });
    expect(health.body.components.auth).toEqual({ status: 'UP' });
    expect((await via().get('/api/books')).status).toBe(200);
  });
});
