/**
 * What the gateway's REST path-proxy does with a request: what reaches the service and what comes
 * back, which service a path goes to, and the 503 when that service is down or silent.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import request from 'supertest';
import { closedPort, rawRequest, type RunningGateway } from '../test/gateway';
import { gatewayOverStack } from '../test/gateway-suite';
import { send } from '../test/hostile';
import { expectEnvelope, notUnderContract, UUID, waitFor } from '../test/harness';
import { canonicalPath, upstreamFor } from './proxy-routes';

const setup = gatewayOverStack({ services: ['book'], env: { AUTH_RATE_LIMIT_MAX: '3' } });
const { via, gatewayWith } = setup;

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
    recorded = await gatewayWith({ urls: { ...setup.stack.config.urls, analytics: recorder.url } });
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

  it('keeps serving a kept-alive connection whose body the service answered before reading', async () => {
    // The book service answers 415 on the headers alone; the client is still sending 8 MiB. The
    // gateway reads the rest and drops it, and the same connection carries the next request.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sent = (method: string, path: string, headers: http.OutgoingHttpHeaders, body?: Buffer) =>
        new Promise<{ status: number; socket: net.Socket; text: string }>((resolve, reject) => {
          const req = http.request(`${setup.gateway.url}${path}`, { method, headers, agent }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, socket: req.socket as net.Socket, text: Buffer.concat(chunks).toString() }));
          });
          req.on('error', reject);
          req.end(body);
        });
      const early = await sent('POST', '/api/books/create', { 'Content-Type': 'text/plain' }, Buffer.alloc(8 * 1024 * 1024, 'x'));
      expect(early.status).toBe(415);
      expect(JSON.parse(early.text)).toMatchObject({ status: 415, message: 'Content-Type must be application/json' });
      const next = await sent('GET', '/api/books/', {});
      expect(next.status).toBe(200);
      expect(next.socket).toBe(early.socket);
    } finally {
      agent.destroy();
    }
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
      const gateway = await gatewayWith({ urls: { ...setup.stack.config.urls, analytics: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` } });
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
    expect(seen.headers['x-gateway-proof']).toBe(setup.stack.config.trustProxy.proof);
  });

  it("sends its request id, X-Forwarded-* and proof even when the client's Connection header names them", async () => {
    const res = await rawRequest(recorded.url, 'GET', '/analytics/books', {
      Connection: 'keep-alive, X-Forwarded-For, X-Forwarded-Proto, X-Forwarded-Host, X-Gateway-Proof, X-Request-Id',
      'X-Forwarded-For': '198.51.100.4',
    });
    expect(res.status).toBe(202);
    const [seen] = recorder.received.splice(0);
    expect(seen.headers['x-forwarded-for']).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-forwarded-host']).toBeDefined();
    expect(seen.headers['x-gateway-proof']).toBe(setup.stack.config.trustProxy.proof);
    expect(seen.headers['x-request-id']).toBe(res.headers['x-request-id']);
  });

  it('appends to the X-Forwarded-For of a proxy in front of it that TRUST_PROXY names', async () => {
    const behindProxy = await gatewayWith({
      urls: { ...setup.stack.config.urls, analytics: recorder.url },
      trustProxy: { ...setup.stack.config.trustProxy, frontProxies: ['127.0.0.1'] },
    });
    await notUnderContract(request(behindProxy.url).get('/analytics/books'), 'the recording stub answers').set('X-Forwarded-For', '198.51.100.4');
    expect(recorder.received.splice(0)[0].headers['x-forwarded-for']).toMatch(/^198\.51\.100\.4, (::ffff:)?127\.0\.0\.1$/);
  });

  it("passes a trace context on only from a proxy TRUST_PROXY names, with tracing off too: a client's goes no further", async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await notUnderContract(request(recorded.url).get('/analytics/books'), 'the recording stub answers').set('traceparent', traceparent).set('tracestate', 'chosen=yes');
    const [fromClient] = recorder.received.splice(0);
    expect([fromClient.headers.traceparent, fromClient.headers.tracestate]).toEqual([undefined, undefined]);

    const behindProxy = await gatewayWith({
      urls: { ...setup.stack.config.urls, analytics: recorder.url },
      trustProxy: { ...setup.stack.config.trustProxy, frontProxies: ['127.0.0.1'] },
    });
    await notUnderContract(request(behindProxy.url).get('/analytics/books'), 'the recording stub answers').set('traceparent', traceparent);
    expect(recorder.received.splice(0)[0].headers.traceparent).toBe(traceparent);
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
      send(setup.gateway.url, {
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
      expect(res.body).toEqual((await request(setup.stack.urls.book).get(path)).body);
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
    const down = await gatewayWith({ urls: { ...setup.stack.config.urls, analytics: `http://127.0.0.1:${await closedPort()}` } }, { upstreamTimeoutMs: 600_000 });
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
      const slow = await gatewayWith({ urls: { ...setup.stack.config.urls, analytics: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` } }, { upstreamTimeoutMs: 300 });
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
