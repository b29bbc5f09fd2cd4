/**
 * What the REST fuzz files aim at: the whole system behind the gateway with a few fixtures (users,
 * books, a paid order), the callers a property picks from, every REST route with a valid request to
 * break, and the checks that the system came out of the fuzzing healthy.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import fc from 'fast-check';
import { catalogueReferences, createBook, nextIsbn13, type CatalogueBook } from '../commerce';
import { orderOf, paidPurchase } from '../graphql';
import { adminSession, newUser, registeredUser } from '../harness';
import { captureLog, send, startSystem, type Answer, type LogCapture, type System } from '../hostile';
import { b64, claimsOf } from '../jwt';

type Session = Awaited<ReturnType<typeof registeredUser>>;

export interface FuzzTarget {
  system: System;
  log: LogCapture;
  admin: Awaited<ReturnType<typeof adminSession>>;
  buyer: Session;
  other: Session;
  book: CatalogueBook;
  /** The author, category and publisher the generated books point at. */
  references: { authorId: string; categoryId: string; publisherId: string };
  /** Dear enough that two make a cart over what the payment provider accepts. */
  rareBook: CatalogueBook;
  /** The buyer's paid payment and its order. */
  paymentId: string;
  orderId: string;
  request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer>;
  stop(): Promise<void>;
}

export async function startFuzzTarget(): Promise<FuzzTarget> {
  const log = captureLog('warn');
  const system = await startSystem({ logger: log.logger });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const admin = await adminSession(system.stack);
  const buyer = await registeredUser(system.stack);
  const other = await registeredUser(system.stack);
  const book = await createBook(system.stack, admin.bearer, 'Fuzzed Fables', 12.5);
  const references = await catalogueReferences(system.stack, admin.bearer);
  const rareBook = await createBook(system.stack, admin.bearer, 'First Folio', 600_000);
  const paymentId = (await paidPurchase(system.stack, buyer.bearer, admin.bearer)).paymentId;
  const orderId = await orderOf(system.stack, buyer.bearer, paymentId);
  return {
    system,
    log,
    admin,
    buyer,
    other,
    book,
    references,
    rareBook,
    paymentId,
    orderId,
    request: (method, path, headers, body) => send(system.url, { method, path, headers, body, agent }),
    stop: async () => {
      agent.destroy();
      await system.stop();
    },
  };
}

export type Caller = 'anonymous' | 'buyer' | 'other' | 'admin' | 'forged';

/** Mostly callers who get past authentication, so the generated input reaches validation and the database. */
export const caller = fc.constantFrom<Caller>('admin', 'admin', 'admin', 'buyer', 'buyer', 'other', 'anonymous', 'forged');

export function authorization(target: FuzzTarget, who: Caller): Record<string, string> {
  switch (who) {
    case 'anonymous':
      return {};
    case 'buyer':
      return { Authorization: target.buyer.bearer };
    case 'other':
      return { Authorization: target.other.bearer };
    case 'admin':
      return { Authorization: target.admin.bearer };
    case 'forged': {
      const [header] = target.buyer.tokens.accessToken.split('.');
      return { Authorization: `Bearer ${header}.${b64({ ...claimsOf(target.buyer.tokens.accessToken), role: 'ADMIN' })}.` };
    }
  }
}

/** The fuzz files build their route lists before the target starts: each route reads it when used. */
type Lazy = () => FuzzTarget;

// Valid bodies of every route that takes one; the generators break them in every way.
export const profileBody = (t: FuzzTarget) => ({
  firstName: 'Fuzz',
  lastName: 'Tester',
  email: t.buyer.email,
  phoneNumber: '+14155550100',
  dateOfBirth: '1990-05-17',
  address: '1 Fuzz Street',
});
export const bookBody = (t: FuzzTarget) => ({
  isbn: nextIsbn13(),
  title: 'Fuzz',
  description: 'd',
  price: 9.99,
  language: 'en',
  publishedDate: '2001-01-01',
  publisherId: t.references.publisherId,
  categoryId: t.references.categoryId,
  authorIds: [t.references.authorId],
  stock: 3,
});
const checkoutBody = (book: CatalogueBook, quantity = 1) => ({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity }] });

/** 10,000 nested arrays: class-transformer and class-validator recursed through them until the stack overflowed. */
const DEEP = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;

export interface BodyRoute {
  route: string;
  method: string;
  path: () => string;
  /** Valid bodies of the route, which the generators break. */
  templates: () => unknown[];
  /** Bodies that once got a 500 or 502 here (sent by an ADMIN as JSON), replayed first on every run. */
  regressions?: () => string[];
}

export function bodyRoutes(t: Lazy): BodyRoute[] {
  return [
    {
      route: 'POST /auth/register',
      method: 'POST',
      path: () => '/auth/register',
      templates: () => [newUser()],
      // A lone surrogate made validator's isEmail throw.
      regressions: () => [JSON.stringify({ ...newUser(), email: '\ud800' }), `{"email":${DEEP},"password":"x"}`],
    },
    {
      route: 'POST /auth/login',
      method: 'POST',
      path: () => '/auth/login',
      templates: () => [{ email: t().buyer.email, password: 'Wrong-Pass-1', deviceId: 'fuzz' }],
      regressions: () => [`{"email":${DEEP},"password":"x","deviceId":"d"}`],
    },
    { route: 'POST /auth/refresh', method: 'POST', path: () => '/auth/refresh', templates: () => [{ refreshToken: 'x'.repeat(43) }] },
    { route: 'POST /auth/logout', method: 'POST', path: () => '/auth/logout', templates: () => [{ refreshToken: 'x'.repeat(43) }] },
    {
      route: 'PUT /api/user/update/{id}',
      method: 'PUT',
      path: () => `/api/user/update/${t().buyer.userId}`,
      templates: () => [profileBody(t())],
      regressions: () => [JSON.stringify({ ...profileBody(t()), email: 'a\udc00@example.com' }), `{"firstName":${DEEP}}`],
    },
    { route: 'POST /api/books/batch', method: 'POST', path: () => '/api/books/batch', templates: () => [[t().book.id, randomUUID()]] },
    {
      route: 'POST /api/books/create',
      method: 'POST',
      path: () => '/api/books/create',
      templates: () => [bookBody(t())],
      // A price past 2^53 cents made the price check itself throw.
      regressions: () => [JSON.stringify({ ...bookBody(t()), price: Number.MAX_SAFE_INTEGER + 2 }), `{"authorIds":${DEEP}}`],
    },
    {
      route: 'PUT /api/books/update/{id}',
      method: 'PUT',
      path: () => `/api/books/update/${t().book.id}`,
      templates: () => [bookBody(t())],
      regressions: () => [JSON.stringify({ ...bookBody(t()), price: 1e17 })],
    },
    {
      route: 'POST /api/payments/checkout',
      method: 'POST',
      path: () => '/api/payments/checkout',
      templates: () => [checkoutBody(t().book), checkoutBody(t().rareBook)],
      // An array as a cart line passed validation; a cart over the provider's maximum was a 502.
      regressions: () => [
        JSON.stringify({ checkoutId: randomUUID(), items: [[]] }),
        JSON.stringify(checkoutBody(t().rareBook, 2)),
        JSON.stringify(checkoutBody(t().rareBook, 2000)),
        `{"checkoutId":"x","items":${DEEP}}`,
      ],
    },
  ];
}

export interface IdRoute {
  route: string;
  method: string;
  path: (id: string) => string;
  body?: () => unknown;
  /** Deletes what it names: fuzzed with ids of nothing the other properties rely on. */
  destructive?: boolean;
}

export function idRoutes(t: Lazy): IdRoute[] {
  return [
    { route: 'GET /api/user/{id}', method: 'GET', path: (id) => `/api/user/${id}` },
    // Without `email`, which must equal the named profile's own (400 otherwise).
    { route: 'PUT /api/user/update/{id}', method: 'PUT', path: (id) => `/api/user/update/${id}`, body: () => ({ ...profileBody(t()), email: undefined }) },
    { route: 'DELETE /api/user/{id}', method: 'DELETE', path: (id) => `/api/user/${id}`, destructive: true },
    { route: 'GET /api/books/{id}', method: 'GET', path: (id) => `/api/books/${id}` },
    { route: 'PUT /api/books/update/{id}', method: 'PUT', path: (id) => `/api/books/update/${id}`, body: () => bookBody(t()) },
    { route: 'DELETE /api/books/{id}', method: 'DELETE', path: (id) => `/api/books/${id}`, destructive: true },
    { route: 'GET /api/orders/{id}', method: 'GET', path: (id) => `/api/orders/${id}` },
    { route: 'GET /api/orders/payment/{paymentId}', method: 'GET', path: (id) => `/api/orders/payment/${id}` },
    { route: 'PUT /api/orders/{id}/status', method: 'PUT', path: (id) => `/api/orders/${id}/status?status=PROCESSING` },
    { route: 'POST /api/orders/{id}/cancel', method: 'POST', path: (id) => `/api/orders/${id}/cancel`, destructive: true },
    { route: 'GET /api/payments/{paymentId}', method: 'GET', path: (id) => `/api/payments/${id}` },
    { route: 'POST /api/payments/{paymentId}/sync-order', method: 'POST', path: (id) => `/api/payments/${id}/sync-order` },
  ];
}

export interface QueryRoute {
  route: string;
  method: string;
  path: () => string;
  names: string[];
}

export function queryRoutes(t: Lazy): QueryRoute[] {
  return [
    { route: 'GET /api/books/', method: 'GET', path: () => '/api/books/', names: ['q', 'limit', 'offset'] },
    { route: 'GET /api/books', method: 'GET', path: () => '/api/books', names: ['q', 'limit', 'offset'] },
    { route: 'GET /api/user/search', method: 'GET', path: () => '/api/user/search', names: ['keyword'] },
    { route: 'GET /api/orders', method: 'GET', path: () => '/api/orders', names: ['limit', 'offset', 'status'] },
    { route: 'PUT /api/orders/{id}/status', method: 'PUT', path: () => `/api/orders/${t().orderId}/status`, names: ['status'] },
    { route: 'GET /api/orders/userId', method: 'GET', path: () => '/api/orders/userId', names: ['id'] },
    ...['dashboard', 'revenue', 'revenue/daily', 'revenue/monthly', 'orders', 'books', 'payments'].map((report) => ({
      route: `GET /analytics/${report}`,
      method: 'GET',
      path: () => `/analytics/${report}`,
      names: ['from', 'to'],
    })),
  ];
}

/** Every route of every service, each with a valid request: what a property breaks is elsewhere (headers). */
export function everyRoute(t: Lazy): { method: string; path: () => string; body?: () => unknown }[] {
  return [
    ...bodyRoutes(t).map((route) => ({ method: route.method, path: route.path, body: () => route.templates()[0] })),
    ...idRoutes(t)
      .filter((route) => !route.destructive)
      .map((route) => ({ method: route.method, path: () => route.path(t().paymentId), body: route.body })),
    ...queryRoutes(t).map((route) => ({ method: route.method, path: route.path })),
    { method: 'POST', path: () => '/auth/logout-all' },
    { method: 'GET', path: () => '/auth/.well-known/jwks.json' },
    { method: 'GET', path: () => '/api/user/' },
    { method: 'GET', path: () => '/api/orders/me' },
    { method: 'GET', path: () => '/api/payments' },
    { method: 'POST', path: () => '/api/payments/webhook', body: () => ({ id: 'evt_x', type: 'payment_intent.succeeded' }) },
    { method: 'GET', path: () => '/actuator/health' },
  ];
}

/** Starts the target before the calling file's tests, hands it to `use`, and stops it after them. */
export function aroundFuzzTarget(use: (target: FuzzTarget) => void): void {
  let started: FuzzTarget | undefined;
  beforeAll(async () => {
    started = await startFuzzTarget();
    use(started);
  }, 60_000);
  afterAll(async () => {
    await started?.stop();
  });
}

/** The last tests of a fuzz file: the system is healthy and nothing behind any answer was an unhandled error. */
export function describeAftermath(t: Lazy): void {
  describe('after the fuzzing', () => {
    it('every service is still UP behind the gateway and the fixtures still answer', async () => {
      const target = t();
      const health = await target.request('GET', '/actuator/health', {});
      expect(health.status).toBe(200);
      const up = { status: 'UP' };
      expect(health.json).toMatchObject({ status: 'UP', components: { auth: up, user: up, book: up, order: up, payment: up, analytics: up } });
      const login = await target.request(
        'POST',
        '/auth/login',
        { 'Content-Type': 'application/json' },
        JSON.stringify({ email: target.other.email, password: target.other.password, deviceId: 'after' }),
      );
      expect(login.status).toBe(200);
      const order = await target.request('GET', `/api/orders/${target.orderId}`, authorization(target, 'buyer'));
      expect(order.status).toBe(200);
    });

    it('nothing was logged at error level: no unhandled error behind any 4xx', () => {
      const errors = t()
        .log.entriesAtLeast(50)
        .map((entry) => ({ msg: entry.msg, err: (entry.err as { message?: string } | undefined)?.message, path: entry.path }));
      expect(errors).toEqual([]);
    });
  });
}
