/**
 * The REST contract document (openapi.yaml) against itself and against the code: it is valid OpenAPI
 * 3.1, its examples match its schemas, it lists exactly the routes the services and the gateway
 * register, and the checker that every test's answers go through (test/openapi) does catch violations.
 *
 * Registered routes are read from each app's Express 5 router: every route is an `app.route()` /
 * `router.route()` with its methods (`route.methods`), and mounted routers keep their mount path in
 * `layer.rawPath`; both are the router's own records, so nothing has to be declared twice.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express, { type Express } from 'express';
import { stringify } from 'yaml';
import { createGateway } from '../gateway';
import { upstreamFor } from '../gateway/proxy-routes';
import { SERVICE_NAMES, type ServiceName } from '../platform/config';
import { createLogger } from '../platform/logger';
import request from 'supertest';
import { startGateway } from '../test/gateway';
import { expectEnvelope, startStack, type Stack } from '../test/harness';
import { compileSchema, ContractViolation, createAjv, isNonRest, ResponseContract, type Answer } from '../test/openapi/contract';
import { takeViolations } from '../test/openapi/setup';
import { methodNotAllowed } from './app';
import { loadOpenApiDocument, OPENAPI_FILE, operationsOf, resolveResponse, type OpenApiDocument } from './openapi';

const document = loadOpenApiDocument();

interface RegisteredRoute {
  method: string;
  path: string;
  /** The route ends in rest-compat's methodNotAllowed, so other methods get 405 with Allow. */
  answers405: boolean;
}

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean>; stack: { handle: unknown }[] };
  handle?: { stack?: Layer[] };
  rawPath?: unknown;
}

const joinPath = (prefix: string, route: string) => `${prefix}${route === '/' && prefix !== '' ? '/' : route}`.replace(/\/{2,}/g, '/');

function registeredRoutes(app: Express): RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const answers405 = layer.route.stack.some((inner) => inner.handle === methodNotAllowed);
        const methods = Object.keys(layer.route.methods).filter((method) => method !== '_all');
        for (const routePath of [layer.route.path].flat()) {
          for (const method of methods) routes.push({ method: method.toUpperCase(), path: joinPath(prefix, routePath), answers405 });
        }
      } else if (Array.isArray(layer.handle?.stack)) {
        const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, `${prefix}${mount}`);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return routes;
}

/** `/api/user/:id` and `/api/user/{id}` alike, trailing slash dropped: `GET /api/user/{id}`. */
const routeKey = (method: string, routePath: string) => {
  const template = routePath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  return `${method.toUpperCase()} ${template.length > 1 ? template.replace(/\/$/, '') : template}`;
};

const documentedRoutes = () =>
  Object.entries(document.paths)
    .flatMap(([template, item]) => operationsOf(item).map(([method]) => routeKey(method, template)))
    .sort();

describe('the document', () => {
  const cli = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');
  // The validator is an ES module: it runs in its own Node process, on the file itself.
  const validate = (file: string) => {
    try {
      return JSON.parse(execFileSync(process.execPath, [cli, file], { encoding: 'utf8' })) as { valid: boolean; errors?: unknown };
    } catch (error) {
      const output = (error as { stdout?: string }).stdout ?? '';
      return output.trim().startsWith('{') ? (JSON.parse(output) as { valid: boolean; errors?: unknown }) : { valid: false, errors: String(error) };
    }
  };

  it('is valid OpenAPI 3.1', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(validate(OPENAPI_FILE)).toEqual({ valid: true });
  });

  it('would be refused by the same check if it were broken', () => {
    const broken: OpenApiDocument = structuredClone(document);
    // A response without its required description.
    broken.paths['/auth/login'].post!.responses['200'] = { content: { 'application/json': { schema: { type: 'object' } } } };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
    try {
      fs.writeFileSync(path.join(dir, 'broken.yaml'), stringify(broken));
      expect(validate(path.join(dir, 'broken.yaml')).valid).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has examples that match their schemas, responses and request bodies alike', () => {
    const ajv = createAjv(document);
    const problems: string[] = [];
    let examples = 0;
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of operationsOf(item)) {
        const bodies = [
          ...Object.entries(operation.requestBody?.content ?? {}).map(([type, media]) => ({ where: `request ${type}`, media })),
          ...Object.entries(operation.responses).flatMap(([status, response]) =>
            Object.entries(resolveResponse(document, response).content ?? {}).map(([type, media]) => ({ where: `${status} ${type}`, media })),
          ),
        ];
        for (const { where, media } of bodies) {
          if (media.example === undefined || !media.schema) continue;
          examples += 1;
          const check = compileSchema(ajv, media.schema);
          if (!check(media.example)) problems.push(`${method.toUpperCase()} ${template} ${where}: ${JSON.stringify(check.errors)}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(examples).toBeGreaterThan(40);
  });

  it('documents the error envelope for every error status, and a success for every operation', () => {
    const problems: string[] = [];
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of operationsOf(item)) {
        const statuses = Object.keys(operation.responses);
        if (!statuses.some((status) => status.startsWith('2'))) problems.push(`${method} ${template}: no success`);
        for (const status of statuses.filter((s) => Number(s) >= 400)) {
          const schema = resolveResponse(document, operation.responses[status]).content?.['application/json']?.schema as { $ref?: string } | undefined;
          const isEnvelope = schema?.$ref === '#/components/schemas/ErrorEnvelope' || /Envelope$/.test(schema?.$ref ?? '');
          // /actuator/health's 503 is the health body, as Spring's is.
          if (!isEnvelope && !(template === '/actuator/health' && status === '503')) problems.push(`${method} ${template} ${status}: not an ErrorEnvelope`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('the document and the code', () => {
  let stack: Stack;
  const byService = new Map<ServiceName | 'gateway', RegisteredRoute[]>();

  beforeAll(async () => {
    stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'] });
    for (const name of SERVICE_NAMES) byService.set(name, registeredRoutes(stack.services[name]!.app));
    const gateway = await createGateway({ config: stack.config, logger: createLogger('silent') });
    byService.set('gateway', registeredRoutes(gateway.app));
    await gateway.stop();
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const restRoutes = () => [...byService.values()].flat().filter((route) => !isNonRest(route.path));

  it('reads the routes of every service and of the gateway', () => {
    for (const [name, routes] of byService) expect({ name, found: routes.some((route) => !isNonRest(route.path)) }).toEqual({ name, found: true });
    expect(byService.get('user')!.map((route) => routeKey(route.method, route.path))).toEqual(
      expect.arrayContaining(['GET /api/user/{id}', 'POST /api/user/create', 'GET /actuator/health']),
    );
    expect(byService.get('gateway')!.map((route) => routeKey(route.method, route.path))).toEqual(expect.arrayContaining(['GET /actuator/health', 'GET /openapi.json']));
  });

  it('documents every route the services and the gateway register, and nothing else', () => {
    const registered = [...new Set(restRoutes().map((route) => routeKey(route.method, route.path)))].sort();
    expect(registered).toEqual(documentedRoutes());
  });

  it('answers 405 on every registered path for the methods it does not serve, as the document says', () => {
    expect(
      restRoutes()
        .filter((route) => !route.answers405)
        .map((route) => routeKey(route.method, route.path)),
    ).toEqual([]);
  });

  it('answers 405 with Allow on the actuator paths too, at a service and at the gateway', async () => {
    const gateway = await startGateway(stack.config, { healthChecks: [] });
    try {
      for (const base of [stack.urls.user, gateway.url]) {
        const res = await request(base).post('/actuator/health');
        expectEnvelope(res, 405);
        expect(res.headers.allow).toBe('GET, HEAD');
      }
    } finally {
      await gateway.stop();
    }
  });

  it("reaches every service route through the gateway's proxy table", () => {
    const misrouted = SERVICE_NAMES.flatMap((name) =>
      byService
        .get(name)!
        .filter((route) => !isNonRest(route.path) && !route.path.startsWith('/actuator/') && upstreamFor(route.path) !== name)
        .map((route) => `${name}: ${routeKey(route.method, route.path)}`),
    );
    expect(misrouted).toEqual([]);
  });
});

describe('the response checker every test goes through', () => {
  const contract = new ResponseContract(document);
  const user = {
    userId: '0325819d-3e01-4c39-b17d-35f781dfe1f4',
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@example.com',
    phoneNumber: '+14155550100',
    dateOfBirth: '1990-12-10',
    address: '1 Analytical Row, London',
    emailVerified: false,
    createdAt: '2026-11-22T00:13:52.901',
    updatedAt: '2026-11-22T00:13:52.901',
  };
  const envelope = (status: number, error: string, path: string) => ({ timestamp: '2026-11-22T00:13:53.640', status, error, message: 'x', path, validationErrors: null });
  const json = (method: string, path: string, status: number, body: unknown): Answer => ({
    method,
    path,
    status,
    contentType: 'application/json; charset=utf-8',
    body,
    text: JSON.stringify(body),
  });
  const violation = (answer: Answer) => {
    try {
      contract.check(answer);
    } catch (error) {
      if (error instanceof ContractViolation) return error.message;
      throw error;
    }
    return undefined;
  };

  it('accepts documented answers, matching the path template and trailing slashes', () => {
    expect(contract.check(json('GET', `/api/user/${user.userId}`, 200, user))).toEqual({ kind: 'validated', key: 'GET /api/user/{id} 200' });
    expect(contract.check(json('GET', '/api/user', 200, [user]))).toEqual({ kind: 'validated', key: 'GET /api/user/ 200' });
    expect(contract.check(json('GET', '/API/User/search/', 200, []))).toEqual({ kind: 'validated', key: 'GET /api/user/search 200' });
    expect(contract.check({ method: 'HEAD', path: '/actuator/info', status: 200, contentType: 'application/json', body: {}, text: '' })).toEqual({
      kind: 'validated',
      key: 'GET /actuator/info 200',
    });
    expect(contract.check({ method: 'POST', path: '/auth/logout', status: 204, contentType: undefined, body: {}, text: '' })).toEqual({
      kind: 'validated',
      key: 'POST /auth/logout 204',
    });
  });

  it('names the method, path, status and the schema errors of a body that does not match', () => {
    const message = violation(json('GET', `/api/user/${user.userId}`, 200, { ...user, passwordHash: 'x' }));
    expect(message).toMatch(/^OpenAPI contract violation: GET \/api\/user\/[0-9a-f-]+ answered 200: the body does not match/);
    expect(message).toMatch(/must NOT have additional properties.*passwordHash/);
    expect(violation(json('GET', `/api/user/${user.userId}`, 200, { ...user, createdAt: '2026-11-22T00:13:52Z' }))).toMatch(/\/createdAt must match pattern/);
    expect(violation(json('GET', `/api/user/${user.userId}`, 200, { ...user, userId: user.userId.toUpperCase() }))).toMatch(/\/userId must match pattern/);
    const { address: _address, ...withoutAddress } = user;
    expect(violation(json('GET', `/api/user/${user.userId}`, 200, withoutAddress))).toMatch(/must have required property 'address'/);
  });

  it('holds money to 2 decimals and enums to their values', () => {
    const item = { bookId: user.userId, bookTitle: 'Dracula', quantity: 2, price: 19.99 };
    const payment = {
      paymentId: user.userId,
      checkoutId: user.userId,
      orderId: null,
      amount: 39.98,
      status: 'PAYMENT_PENDING',
      paymentIntentId: 'pi_1',
      clientSecret: 'pi_1_secret_2',
      items: [item],
      refundedAmount: 0,
      refunds: [],
      failureReason: null,
      holdExpiresAt: null,
    };
    expect(violation(json('GET', `/api/payments/${user.userId}`, 200, payment))).toBeUndefined();
    expect(violation(json('GET', `/api/payments/${user.userId}`, 200, { ...payment, amount: 39.981 }))).toMatch(/\/amount must be multiple of 0.01/);
    expect(violation(json('GET', `/api/payments/${user.userId}`, 200, { ...payment, amount: '39.98' }))).toMatch(/\/amount must be number/);
    expect(violation(json('GET', `/api/payments/${user.userId}`, 200, { ...payment, status: 'PAID' }))).toMatch(/\/status must be equal to one of the allowed values/);
  });

  it('refuses an undocumented status, media type or route', () => {
    expect(violation(json('GET', `/api/user/${user.userId}`, 500, envelope(500, 'Internal Server Error', '/api/user')))).toMatch(
      /status 500 is not documented for GET \/api\/user\/\{id\}/,
    );
    expect(violation(json('GET', `/api/user/${user.userId}`, 403, envelope(403, 'Forbidden', '/api/user')))).toMatch(/status 403 is not documented/);
    expect(violation({ ...json('DELETE', `/api/user/${user.userId}`, 200, {}), contentType: 'application/json' })).toMatch(
      /Content-Type application\/json is not documented \(documented: text\/plain\)/,
    );
    expect(violation(json('GET', '/api/nowhere', 200, {}))).toMatch(/the path matches no documented route, and 200 is not the documented answer to an unknown path/);
    expect(violation(json('PATCH', '/auth/login', 200, {}))).toMatch(/PATCH is not documented for \/auth\/login/);
    expect(violation({ method: 'POST', path: '/auth/logout', status: 204, contentType: 'text/plain', body: {}, text: 'bye' })).toMatch(/has no body, but one was sent/);
  });

  it('accepts the shared answers: 404 on an unknown path, 405 on an unknown method, 404 for any method on an internal path', () => {
    expect(contract.check(json('GET', '/api/nowhere', 404, envelope(404, 'Not Found', '/api/nowhere')))).toEqual({ kind: 'validated', key: 'x-fallback unknownPath 404' });
    expect(contract.check(json('GET', '/auth/login', 405, envelope(405, 'Method Not Allowed', '/auth/login')))).toEqual({ kind: 'validated', key: 'x-fallback unknownMethod 405' });
    expect(contract.check(json('GET', '/api/user/create', 404, envelope(404, 'Not Found', '/api/user/create')))).toEqual({ kind: 'validated', key: 'x-fallback unknownPath 404' });
    expect(violation(json('GET', '/api/books/batch', 404, envelope(404, 'Not Found', '/api/books/batch')))).toMatch(/GET is not documented for \/api\/books\/batch/);
    expect(violation(json('GET', '/auth/login', 405, envelope(404, 'Not Found', '/auth/login')))).toMatch(/\/status must be equal to constant/);
  });

  it('is wired into supertest: a test receiving an undocumented answer fails with the reason', async () => {
    const rogue = express();
    rogue.get('/api/books/:id', (_req, res) => void res.status(418).json({ teapot: true }));
    rogue.get('/api/books/', (_req, res) => void res.json([{ id: 'not-a-uuid' }]));
    await expect(request(rogue).get(`/api/books/${user.userId}`)).rejects.toThrow(
      /^OpenAPI contract violation: GET \/api\/books\/[0-9a-f-]+ answered 418: status 418 is not documented for GET \/api\/books\/\{id\}/,
    );
    await expect(request(rogue).get('/api/books')).rejects.toThrow(/answered 200: the body does not match the documented schema\n {2}- \/0 must have required property 'isbn'/);
    // Reported again after the test, in case a test swallowed the rejection; taken here as this test expects them.
    expect(takeViolations()).toHaveLength(2);
  });

  it('leaves what is not REST alone', () => {
    for (const exempt of ['/graphql', '/simulator/payment_intents/pi_1/confirm', '/v1/payment_intents', '/admin/users', '/docs/', '/openapi.json']) {
      expect(contract.check(json('GET', exempt, 200, {}))).toEqual({ kind: 'exempt' });
    }
  });
});
