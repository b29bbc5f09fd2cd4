/**
 * The REST contract on the gateway: /openapi.json is the YAML document as JSON, and /docs renders it
 * with Swagger UI from the installed package under a strict CSP, checked in headless Chromium
 * (screenshots in test-results/screenshots/docs*.png).
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { loadOpenApiDocument, operationsOf } from '../rest-compat/openapi';
import { launchChromium, SCREENSHOTS_DIR, type Browser } from '../test/admin-ui';
import { startGateway, type RunningGateway } from '../test/gateway';
import { expectEnvelope, testConfig } from '../test/harness';

jest.setTimeout(60_000);

const config = testConfig();
let gateway: RunningGateway;
beforeAll(async () => {
  gateway = await startGateway(config, { healthChecks: [] });
});
afterAll(async () => {
  await gateway?.stop();
  fs.rmSync(config.dataDir, { recursive: true, force: true });
});

const document = loadOpenApiDocument();
const operationCount = Object.values(document.paths).reduce((sum, item) => sum + operationsOf(item).length, 0);

describe('GET /openapi.json', () => {
  it('answers the YAML document as JSON', async () => {
    const res = await request(gateway.url).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(document);
    expect(res.body.openapi).toBe('3.1.0');
  });
});

describe('GET /docs', () => {
  it("answers the reference page, which loads only this origin's scripts", async () => {
    for (const target of ['/docs', '/docs/']) {
      const res = await request(gateway.url).get(target);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toMatch(/script-src 'self'(;|$)/);
      expect(res.text).toContain('<script src="/docs/assets/swagger-ui-bundle.js"></script>');
      expect(res.text).not.toMatch(/<script>|https?:\/\//);
    }
  });

  it('serves the Swagger UI files from the installed package, and nothing else of it', async () => {
    const bundle = await request(gateway.url).get('/docs/assets/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/javascript/);
    expect((await request(gateway.url).get('/docs/assets/swagger-ui.css')).headers['content-type']).toMatch(/^text\/css/);
    const init = await request(gateway.url).get('/docs/init.js');
    expect(init.text).toContain("url: '/openapi.json'");
    expect(init.text).toContain('validatorUrl: null');
    expectEnvelope(await request(gateway.url).get('/docs/assets/swagger-initializer.js'), 404);
    expectEnvelope(await request(gateway.url).get('/docs/assets/package.json'), 404);
  });

  describe('in headless Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('renders every operation of the document, with no script or CSP error', async () => {
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      const outside: string[] = [];
      page.on('request', (req) => {
        if (!req.url().startsWith(gateway.url) && !req.url().startsWith('data:')) outside.push(req.url());
      });

      await page.goto(`${gateway.url}/docs`);
      await page.locator('.information-container .title').filter({ hasText: 'Bookstore backend REST API' }).waitFor();
      await page.locator('.opblock').first().waitFor();
      expect(await page.locator('.opblock').count()).toBe(operationCount);
      expect(await page.locator('.opblock-summary-path').allInnerTexts()).toEqual(
        expect.arrayContaining(['/api/payments/webhook', '/analytics/payments', '/auth/.well-known/jwks.json']),
      );

      fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'docs.png') });

      // Opening one operation shows its responses with the error envelope.
      await page.locator('#operations-payment-checkout .opblock-summary').click();
      await page.locator('#operations-payment-checkout .responses-table').first().waitFor();
      expect(await page.locator('#operations-payment-checkout .response-col_status').allInnerTexts()).toEqual(expect.arrayContaining(['200', '409', '502', '503']));

      await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'docs-checkout.png') });
      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
      await page.close();
    });
  });
});
