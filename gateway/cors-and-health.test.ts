/**
 * The gateway's own answers: CORS for browsers (and how CORS_ORIGINS and its neighbours are read),
 * and its actuator, whose health asks every upstream it proxies to.
 */
import os from 'node:os';
import request from 'supertest';
import { ConfigError, loadConfig } from '../platform/config';
import { closedPort } from '../test/gateway';
import { gatewayOverStack } from '../test/gateway-suite';
import { expectEnvelope } from '../test/harness';

const SHOP = 'https://shop.example';

const setup = gatewayOverStack({ services: ['book'], env: { CORS_ORIGINS: SHOP } }, { healthChecks: ['auth', 'user', 'book'] });
const { via, gatewayWith } = setup;

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

  it('shares identical client queries in flight unless GATEWAY_DEDUPLICATE_REQUESTS is false', () => {
    const share = (value?: string) => loadConfig({ INTERNAL_API_KEY: 'k', ...(value === undefined ? {} : { GATEWAY_DEDUPLICATE_REQUESTS: value }) }).gatewayDeduplicateRequests;
    expect(share()).toBe(true);
    expect(share('false')).toBe(false);
    expect(() => share('maybe')).toThrow(ConfigError);
  });

  it('runs one process unless GATEWAY_WORKERS asks for more, or for one per core with auto', () => {
    const workers = (value?: string) => loadConfig({ INTERNAL_API_KEY: 'k', ...(value === undefined ? {} : { GATEWAY_WORKERS: value }) }).gatewayWorkers;
    expect(workers()).toBe(1);
    expect(workers('3')).toBe(3);
    expect(workers('auto')).toBe(os.availableParallelism());
    for (const wrong of ['0', '-1', '1.5', 'many', '257']) expect(() => workers(wrong)).toThrow(/GATEWAY_WORKERS/);
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
      ...setup.stack.config.urls,
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

// Last: it stops the user service of this file's setup.stack.
describe('a stopped service', () => {
  it('gets 503 through the gateway, and health marks it DOWN', async () => {
    await setup.stack.services.user?.stop();
    expectEnvelope(await via().get('/api/user/'), 503, 'Service unavailable: user');
    const health = await via().get('/actuator/health');
    expect(health.status).toBe(503);
    expect(health.body.status).toBe('DOWN');
    expect(health.body.components.user).toEqual({ status: 'DOWN', error: expect.any(String) });
    expect(health.body.components.auth).toEqual({ status: 'UP' });
    expect((await via().get('/api/books')).status).toBe(200);
  });
});
