import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { expectEnvelope, testConfig } from '../test/harness';
import { rawRequest, startGateway, type RunningGateway } from '../test/gateway';
import { ADMIN_DIST_DIR, ADMIN_NOT_BUILT } from './admin-static';

const INDEX = '<!doctype html><title>Bookstore admin</title><script type="module" src="/admin/assets/index-AbC123.js"></script>';

function builtUi(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-ui-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), INDEX);
  fs.writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log("admin")');
  fs.writeFileSync(path.join(dir, 'robots.txt'), 'User-agent: *\nDisallow: /\n');
  return dir;
}

describe('the gateway serving the built admin UI at /admin', () => {
  const config = testConfig();
  let dir: string;
  let gateway: RunningGateway;

  beforeAll(async () => {
    dir = builtUi();
    gateway = await startGateway(config, { adminDir: dir, healthChecks: [] });
  });
  afterAll(async () => {
    await gateway?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(config.dataDir, { recursive: true, force: true });
  });

  it('answers index.html at /admin and /admin/, never cached without revalidation', async () => {
    for (const target of ['/admin', '/admin/']) {
      const res = await request(gateway.url).get(target);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.text).toBe(INDEX);
    }
  });

  it('answers index.html for client-side routes under /admin/*', async () => {
    for (const target of ['/admin/users', '/admin/users/0b5e1c2d-0000-4000-8000-000000000000', '/admin/orders?status=CONFIRMED']) {
      const res = await request(gateway.url).get(target);
      expect(res.status).toBe(200);
      expect(res.text).toBe(INDEX);
      expect(res.headers['cache-control']).toBe('no-cache');
    }
  });

  it('caches hashed assets for a year and other files not without revalidation', async () => {
    const asset = await request(gateway.url).get('/admin/assets/index-AbC123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');

    const robots = await request(gateway.url).get('/admin/robots.txt');
    expect(robots.status).toBe(200);
    expect(robots.headers['cache-control']).toBe('no-cache');
  });

  it('lets a browser revalidate index.html with its ETag', async () => {
    const first = await request(gateway.url).get('/admin/');
    expect(first.headers.etag).toEqual(expect.any(String));
    const again = await request(gateway.url).get('/admin/').set('If-None-Match', first.headers.etag);
    expect(again.status).toBe(304);
  });

  it('sends a content security policy that allows only its own origin', async () => {
    const res = await request(gateway.url).get('/admin/');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers the 404 envelope for a missing asset rather than the page', async () => {
    expectEnvelope(await request(gateway.url).get('/admin/assets/index-Gone99.js'), 404);
    expectEnvelope(await request(gateway.url).get('/admin/favicon.ico'), 404);
  });

  it('leaves other paths and methods to the 404 envelope', async () => {
    expectEnvelope(await request(gateway.url).get('/administrator'), 404);
    expectEnvelope(await request(gateway.url).post('/admin/users').send({}), 404);
  });

  it('never serves a file outside the built folder', async () => {
    for (const target of ['/admin/../package.json', '/admin/%2e%2e/%2e%2e/package.json', '/admin/assets/..%2f..%2findex.html']) {
      const res = await rawRequest(gateway.url, 'GET', target);
      expect(res.body.toString()).not.toContain('"name"');
      expect([200, 400, 403, 404]).toContain(res.status);
      if (res.status === 200) expect(res.body.toString()).toBe(INDEX);
    }
  });
});

describe('the gateway without a built admin UI', () => {
  const config = testConfig();
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway(config, { adminDir: path.join(config.dataDir, 'no-admin-build'), healthChecks: [] });
  });
  afterAll(async () => {
    await gateway?.stop();
    fs.rmSync(config.dataDir, { recursive: true, force: true });
  });

  it('answers 503 with the envelope saying how to build it', async () => {
    expectEnvelope(await request(gateway.url).get('/admin'), 503, ADMIN_NOT_BUILT);
    expectEnvelope(await request(gateway.url).get('/admin/users/1'), 503, ADMIN_NOT_BUILT);
  });

  it('still answers its other routes', async () => {
    expectEnvelope(await request(gateway.url).get('/nowhere'), 404);
  });
});

describe('where the gateway finds the built UI', () => {
  it('is dist/admin under the project root when run from the sources', () => {
    expect(ADMIN_DIST_DIR).toBe(path.resolve(__dirname, '..', 'dist', 'admin'));
  });
});
