import { createHash, randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ServiceName } from '../platform/config';
import { signatureHeader } from '../simulators/stripe/simulator';
import { catalogueReferences, createBook, nextIsbn13, type CatalogueBook } from '../test/commerce';
import { rawRequest, startGateway, type RunningGateway } from '../test/gateway';
import { adminSession, AUTHENTICATION_REQUIRED, expectEnvelope, INTERNAL_KEY, newUser, registeredUser, startStack, waitFor, WEBHOOK_SECRET, type Stack } from '../test/harness';

let stack: Stack;
let gateway: RunningGateway;
let admin: Awaited<ReturnType<typeof adminSession>>;
let buyer: Awaited<ReturnType<typeof registeredUser>>;
let novel: CatalogueBook;

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment'] });
  gateway = await startGateway(stack.config);
  admin = await adminSession(stack);
  buyer = await registeredUser(stack);
  novel = await createBook(stack, admin.bearer, 'Middlemarch', 19.99);
}, 60_000);
afterAll(async () => {
  await gateway?.stop();
  await stack?.stop();
});

type Client = ReturnType<typeof request>;
const via = (): Client => request(gateway.url);
const direct = (service: ServiceName): Client => request(stack.urls[service]);
/** An id no resource has; fixed, so the service and the gateway are asked the same thing. */
const unknownId = randomUUID();

/** What a client sees: status, media type, the headers that carry meaning, and the body (error timestamps masked). */
function seen(res: request.Response) {
  const type = res.headers['content-type'] as string | undefined;
  let body: unknown = type?.includes('json') ? res.body : res.text;
  if (body && typeof body === 'object' && 'timestamp' in body) body = { ...body, timestamp: '<timestamp>' };
  return { status: res.status, type, allow: res.headers.allow, cacheControl: res.headers['cache-control'], retryAfter: res.headers['retry-after'], body };
}

/** Sends one request to the service, then the same through the gateway: the answers must be the same. */
async function same(service: ServiceName, send: (client: Client) => request.Test): Promise<request.Response> {
  const fromService = await send(direct(service));
  const fromGateway = await send(via());
  expect(seen(fromGateway)).toEqual(seen(fromService));
  return fromGateway;
}

/** For writes that cannot be sent twice: the same status, media type and fields, values aside from `keep`. */
function expectSameShape(fromGateway: request.Response, fromService: request.Response, keep: string[] = []): void {
  const shape = (res: request.Response) => ({
    status: res.status,
    type: res.headers['content-type'],
    fields: Object.keys(res.body as object).sort(),
    kept: Object.fromEntries(keep.map((field) => [field, (res.body as Record<string, unknown>)[field]])),
  });
  expect(shape(fromGateway)).toEqual(shape(fromService));
}

describe('auth routes through the gateway', () => {
  it('register: the same answer as the service, duplicates (409) and invalid bodies (400) included', async () => {
    const fromGateway = await via().post('/auth/register').send(newUser());
    const fromService = await direct('auth').post('/auth/register').send(newUser());
    expect(fromGateway.status).toBe(200);
    expectSameShape(fromGateway, fromService, ['message']);

    const taken = newUser();
    expect((await via().post('/auth/register').send(taken)).status).toBe(200);
    expectEnvelope(await same('auth', (c) => c.post('/auth/register').send(taken)), 409, `A user with email ${taken.email} already exists`);
    expectEnvelope(await same('auth', (c) => c.post('/auth/register').send({ ...newUser(), password: 'short' })), 400, 'Validation failed for one or more fields');
  });

  it('login, refresh, logout: the same answers as the service', async () => {
    const credentials = { email: buyer.email, password: buyer.password };
    const fromGateway = await via()
      .post('/auth/login')
      .send({ ...credentials, deviceId: 'through-gateway' });
    const fromService = await direct('auth')
      .post('/auth/login')
      .send({ ...credentials, deviceId: 'direct' });
    expect(fromGateway.status).toBe(200);
    expectSameShape(fromGateway, fromService, ['expiresIn']);
    expectEnvelope(
      await same('auth', (c) => c.post('/auth/login').send({ ...credentials, password: 'Wrong12345', deviceId: 'through-gateway' })),
      401,
      'Invalid email or password.',
    );

    const rotated = await via().post('/auth/refresh').send({ refreshToken: fromGateway.body.refreshToken });
    expect(rotated.status).toBe(200);
    expectSameShape(rotated, await direct('auth').post('/auth/refresh').send({ refreshToken: fromService.body.refreshToken }), ['expiresIn']);
    expectEnvelope(await same('auth', (c) => c.post('/auth/refresh').send({ refreshToken: randomBytes(32).toString('base64url') })), 401);

    const loggedOut = await same('auth', (c) => c.post('/auth/logout').send({ refreshToken: rotated.body.refreshToken }));
    expect(loggedOut.status).toBe(204);
    expect(loggedOut.text).toBe('');
  });

  it('logout-all: 401 without a bearer as at the service, 204 with one', async () => {
    const leaving = await registeredUser(stack);
    expectEnvelope(await same('auth', (c) => c.post('/auth/logout-all')), 401, AUTHENTICATION_REQUIRED);
    const res = await via().post('/auth/logout-all').set('Authorization', leaving.bearer);
    expect(res.status).toBe(204);
    expect((await direct('auth').post('/auth/refresh').send({ refreshToken: leaving.tokens.refreshToken })).status).toBe(401);
  });

  it('jwks and a 405 with its Allow header: the same as the service', async () => {
    const jwks = await same('auth', (c) => c.get('/auth/.well-known/jwks.json'));
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys).toEqual(expect.any(Array));
    const wrongMethod = await same('auth', (c) => c.get('/auth/login'));
    expectEnvelope(wrongMethod, 405);
    expect(wrongMethod.headers.allow).toBe('POST');
  });
});

describe('user routes through the gateway', () => {
  it('get, list and search: the same answers as the service, errors included', async () => {
    expect((await same('user', (c) => c.get(`/api/user/${buyer.userId}`).set('Authorization', buyer.bearer))).status).toBe(200);
    expectEnvelope(await same('user', (c) => c.get(`/api/user/${unknownId}`).set('Authorization', buyer.bearer)), 404);
    expectEnvelope(await same('user', (c) => c.get('/api/user/not-a-uuid').set('Authorization', buyer.bearer)), 400);
    expectEnvelope(await same('user', (c) => c.get(`/api/user/${buyer.userId}`)), 401, AUTHENTICATION_REQUIRED);

    for (const path of ['/api/user/', '/api/user']) {
      expect((await same('user', (c) => c.get(path).set('Authorization', admin.bearer))).status).toBe(200);
    }
    expectEnvelope(await same('user', (c) => c.get('/api/user/').set('Authorization', buyer.bearer)), 403);
    const found = await same('user', (c) => c.get('/api/user/search').query({ keyword: buyer.email }).set('Authorization', admin.bearer));
    expect(found.body.map((profile: { userId: string }) => profile.userId)).toEqual([buyer.userId]);
    expectEnvelope(await same('user', (c) => c.get('/api/user/search').set('Authorization', admin.bearer)), 400);
  });

  it('update: the same profile as the service answers, and the same 400', async () => {
    const body = { firstName: 'Grace', lastName: 'Hopper', email: buyer.email, phoneNumber: '+14155550199', dateOfBirth: '1985-12-09', address: '2 Harbor Road' };
    const update = (c: Client) => c.put(`/api/user/update/${buyer.userId}`).set('Authorization', buyer.bearer);
    const fromGateway = await update(via()).send(body);
    const fromService = await update(direct('user')).send(body);
    expect(fromGateway.status).toBe(200);
    const withoutUpdatedAt = (res: request.Response) => ({ ...seen(res), body: { ...res.body, updatedAt: '<updatedAt>' } });
    expect(withoutUpdatedAt(fromGateway)).toEqual(withoutUpdatedAt(fromService));
    expectEnvelope(await same('user', (c) => update(c).send({ ...body, email: 'someone.else@example.com' })), 400);
  });

  it('delete: the same plain-text answer as the service, and the same 403 and 404', async () => {
    const [first, second] = [await registeredUser(stack), await registeredUser(stack)];
    const fromGateway = await via().delete(`/api/user/${first.userId}`).set('Authorization', admin.bearer);
    const fromService = await direct('user').delete(`/api/user/${second.userId}`).set('Authorization', admin.bearer);
    expect(fromGateway.status).toBe(200);
    expect(fromGateway.headers['content-type']).toBe(fromService.headers['content-type']);
    expect(fromGateway.text).toBe(`User with id : ${first.userId} Deleted successfully`);
    expectEnvelope(await same('user', (c) => c.delete(`/api/user/${admin.userId}`).set('Authorization', admin.bearer)), 403, 'Admins cannot delete their own account');
    expectEnvelope(await same('user', (c) => c.delete(`/api/user/${first.userId}`).set('Authorization', admin.bearer)), 404);
  });
});

describe('book routes through the gateway', () => {
  it('list, get and batch: the same answers as the service, errors included', async () => {
    for (const path of ['/api/books/', '/api/books', '/api/books/?q=middlemarch&limit=5']) {
      expect((await same('book', (c) => c.get(path))).status).toBe(200);
    }
    expectEnvelope(await same('book', (c) => c.get('/api/books/?limit=0')), 400);
    expect((await same('book', (c) => c.get(`/api/books/${novel.id}`))).body.title).toBe('Middlemarch');
    expectEnvelope(await same('book', (c) => c.get(`/api/books/${unknownId}`)), 404);
    expectEnvelope(await same('book', (c) => c.get('/api/books/not-a-uuid')), 400);
    const batch = await same('book', (c) => c.post('/api/books/batch').send([unknownId, novel.id]));
    expect(batch.body.map((book: { id: string }) => book.id)).toEqual([novel.id]);
    expectEnvelope(await same('book', (c) => c.post('/api/books/batch').send({ ids: [] })), 400);
  });

  it('the catalogue compressed and revalidated: the service’s bytes, ETag, Vary and 304 as they are', async () => {
    for (let i = 0; i < 4; i += 1) await createBook(stack, admin.bearer, `Shelf ${i} ${randomUUID()}`, 9.99);
    const headers = { 'Accept-Encoding': 'gzip, br' };
    const [fromService, fromGateway] = [await rawRequest(stack.urls.book, 'GET', '/api/books/', headers), await rawRequest(gateway.url, 'GET', '/api/books/', headers)];
    const kept = (answer: typeof fromService) => ({
      status: answer.status,
      coding: answer.headers['content-encoding'],
      etag: answer.headers.etag,
      vary: answer.headers.vary,
      cacheControl: answer.headers['cache-control'],
      sha: createHash('sha256').update(answer.body).digest('hex'),
    });
    expect(kept(fromGateway)).toEqual(kept(fromService));
    expect(fromGateway.headers['content-encoding']).toBe('br');
    const revalidated = await rawRequest(gateway.url, 'GET', '/api/books/', { ...headers, 'If-None-Match': fromGateway.headers.etag as string });
    expect({ status: revalidated.status, bytes: revalidated.body.length, etag: revalidated.headers.etag }).toEqual({ status: 304, bytes: 0, etag: fromGateway.headers.etag });
  });

  it('create, update, delete: the same answers as the service, with 401, 403, 409, malformed JSON and 415', async () => {
    const refs = await catalogueReferences(stack, admin.bearer);
    const book = () => ({
      isbn: nextIsbn13(),
      title: 'Dune',
      description: 'Sand',
      price: 9.99,
      language: 'en',
      publishedDate: '1965-08-01',
      publisherId: refs.publisherId,
      categoryId: refs.categoryId,
      authorIds: [refs.authorId],
      stock: 5,
    });
    const create = (c: Client, bearer = admin.bearer) => c.post('/api/books/create').set('Authorization', bearer);
    const fromGateway = await create(via()).send(book());
    expect(fromGateway.status).toBe(201);
    expectSameShape(fromGateway, await create(direct('book')).send(book()), ['title', 'price']);

    expectEnvelope(await same('book', (c) => create(c).send({ ...book(), isbn: fromGateway.body.isbn })), 409);
    expectEnvelope(await same('book', (c) => create(c, buyer.bearer).send(book())), 403);
    expectEnvelope(await same('book', (c) => c.post('/api/books/create').send(book())), 401, AUTHENTICATION_REQUIRED);
    expectEnvelope(await same('book', (c) => create(c).set('Content-Type', 'application/json').send('{"title": ')), 400, 'Malformed JSON request body');
    expectEnvelope(await same('book', (c) => create(c).set('Content-Type', 'text/plain').send('Dune')), 415);

    const id = fromGateway.body.id as string;
    const changes = { ...book(), isbn: fromGateway.body.isbn, title: 'Dune Messiah' };
    const updated = await via().put(`/api/books/update/${id}`).set('Authorization', admin.bearer).send(changes);
    expect(updated.status).toBe(200);
    const readBack = await same('book', (c) => c.get(`/api/books/${id}`));
    expect(readBack.body).toEqual(updated.body);

    const deleted = await via().delete(`/api/books/${id}`).set('Authorization', admin.bearer);
    expect(deleted.status).toBe(200);
    expect(deleted.text).toBe('Deleted SuccessFully');
    expectEnvelope(await same('book', (c) => c.delete(`/api/books/${id}`).set('Authorization', admin.bearer)), 404);
  });
});

describe('payment and order routes through the gateway', () => {
  it('checkout: the service answers the same checkout with the same payment; 400 and 401 as at the service', async () => {
    const body = { checkoutId: randomUUID(), items: [{ bookId: novel.id, quantity: 2 }] };
    const fromGateway = await via().post('/api/payments/checkout').set('Authorization', buyer.bearer).send(body);
    expect(fromGateway.status).toBe(200);
    const fromService = await direct('payment').post('/api/payments/checkout').set('Authorization', buyer.bearer).send(body);
    expect(seen(fromGateway)).toEqual(seen(fromService));
    expectEnvelope(
      await same('payment', (c) =>
        c
          .post('/api/payments/checkout')
          .set('Authorization', buyer.bearer)
          .send({ ...body, items: [] }),
      ),
      400,
    );
    expectEnvelope(await same('payment', (c) => c.post('/api/payments/checkout').send(body)), 401, AUTHENTICATION_REQUIRED);
  });

  it('a purchase paid by a signed webhook through the gateway; every read answers as at the service', async () => {
    const shopper = await registeredUser(stack);
    const checkout = await via()
      .post('/api/payments/checkout')
      .set('Authorization', shopper.bearer)
      .send({ checkoutId: randomUUID(), items: [{ bookId: novel.id, quantity: 1 }] });
    expect(checkout.status).toBe(200);
    const { paymentId, paymentIntentId } = checkout.body as { paymentId: string; paymentIntentId: string };
    expectEnvelope(await same('payment', (c) => c.post(`/api/payments/${paymentId}/sync-order`).set('Authorization', shopper.bearer)), 409, 'Payment is not SUCCESS');

    // Odd whitespace, key order and non-ASCII text: any re-serialisation on the way breaks the signature.
    const created = Math.floor(Date.now() / 1000);
    const payload = `{\n  "type" :"payment_intent.succeeded",   "id":"evt_${randomUUID()}" ,\n\t"object":"event","created": ${created},\r\n "note": "café – ☕",  "data":{ "object" : {"id":"${paymentIntentId}","object":"payment_intent",  "amount" : 1999.0 } }\n}\n`;
    const webhook = (c: Client, body: string, signature: string) =>
      c.post('/api/payments/webhook').set('Content-Type', 'application/json; charset=utf-8').set('Stripe-Signature', signature).send(body);
    const tampered = payload.replace('payment_intent.succeeded', 'payment_intent.canceled');
    expectEnvelope(await webhook(via(), tampered, signatureHeader(payload, WEBHOOK_SECRET)), 400, 'Invalid webhook signature');
    const accepted = await webhook(via(), payload, signatureHeader(payload, WEBHOOK_SECRET));
    expect(accepted.status).toBe(200);
    expect(accepted.headers['content-type']).toMatch(/^text\/plain/);
    expect(accepted.text).toBe('Webhook received');
    // A redelivery is acknowledged the same way at the service and through the gateway.
    expect((await same('payment', (c) => webhook(c, payload, signatureHeader(payload, WEBHOOK_SECRET)))).text).toBe('Webhook received');

    const paid = await waitFor(
      async () => {
        const res = await via().get(`/api/payments/${paymentId}`).set('Authorization', shopper.bearer);
        return res.body.status === 'SUCCESS' && res.body.orderId ? (res.body as { orderId: string }) : undefined;
      },
      { what: 'the payment SUCCESS with its orderId' },
    );
    expect((await same('payment', (c) => c.get(`/api/payments/${paymentId}`).set('Authorization', shopper.bearer))).status).toBe(200);
    expectEnvelope(await same('payment', (c) => c.get(`/api/payments/${paymentId}`).set('Authorization', buyer.bearer)), 404, `Payment not found: ${paymentId}`);
    expect((await same('payment', (c) => c.get('/api/payments').set('Authorization', shopper.bearer))).body).toHaveLength(1);

    const mine = await same('order', (c) => c.get('/api/orders/me').set('Authorization', shopper.bearer));
    expect(mine.body.map((order: { orderId: string }) => order.orderId)).toEqual([paid.orderId]);
    expect((await same('order', (c) => c.get(`/api/orders/${paid.orderId}`).set('Authorization', shopper.bearer))).status).toBe(200);
    expect((await same('order', (c) => c.get(`/api/orders/payment/${paymentId}`).set('Authorization', shopper.bearer))).body.orderId).toBe(paid.orderId);
    expectEnvelope(await same('order', (c) => c.get(`/api/orders/payment/${unknownId}`).set('Authorization', shopper.bearer)), 404);
    const foreign = await same('order', (c) => c.get(`/api/orders/${paid.orderId}`).set('Authorization', buyer.bearer));
    expectEnvelope(foreign, foreign.status);
    expect(foreign.status).toBeGreaterThanOrEqual(403);
    expect((await same('order', (c) => c.get('/api/orders').set('Authorization', admin.bearer))).status).toBe(200);
    expectEnvelope(await same('order', (c) => c.get('/api/orders')), 401);
    expect((await same('order', (c) => c.get('/api/webhooks/endpoints').set('Authorization', admin.bearer))).status).toBe(200);
    expectEnvelope(await same('order', (c) => c.get('/api/webhooks/endpoints').set('Authorization', shopper.bearer)), 403);

    const synced = await same('payment', (c) => c.post(`/api/payments/${paymentId}/sync-order`).set('Authorization', shopper.bearer));
    expect(synced.status).toBe(200);
    expect(synced.text).toBe(`payment-success re-published for paymentId=${paymentId}`);
    const wrongMethod = await same('payment', (c) => c.get('/api/payments/webhook'));
    expectEnvelope(wrongMethod, 405);
  });
});

describe('the internal-only route POST /api/user/create', () => {
  // Each spelling below is one some layer could read as /api/user/create: the service's case-insensitive,
  // trailing-slash-tolerant routing, http-proxy's `//` collapsing and `\` → `/`, or a lenient decoder.
  const SPELLINGS = [
    '/api/user/create',
    '/api/user/create/',
    '/api/user/create?x=1',
    '/API/USER/CREATE',
    '/api/user/Create',
    '/api/user/%63reate',
    '/api/user/%63%72%65%61%74%65',
    '/api/user/%2563reate',
    '/api/%75ser/create',
    '/api/user%2fcreate',
    '/api//user/create',
    '/api/user//create',
    '//api/user/create',
    '/api/user/./create',
    '/api/user/%2e/create',
    '/api/user/x/../create',
    '/api/user/x/%2e%2e/create',
    '/api/books/../user/create',
    '/api/user\\create',
    '/api/user/create;jsessionid=1',
    '/api/user/create%20',
    '/api/user/create%00',
    `http://127.0.0.1/api/user/create`,
  ];

  it('answers 404 through the gateway for every spelling, with the right internal key, and creates nothing', async () => {
    const profile = () => {
      const { password: _password, ...fields } = newUser();
      return { userId: randomUUID(), ...fields };
    };
    const headers = { 'Content-Type': 'application/json', 'X-Internal-Api-Key': INTERNAL_KEY };
    // The same request at the service itself creates a profile: the key and the body are right.
    expect((await direct('user').post('/api/user/create').set(headers).send(profile())).status).toBe(200);

    const attempt = profile();
    for (const target of SPELLINGS) {
      const res = await rawRequest(gateway.url, 'POST', target, headers, JSON.stringify(attempt));
      expect({ target, status: res.status, type: res.headers['content-type'] }).toEqual({ target, status: 404, type: expect.stringMatching(/^application\/json/) });
      expect(JSON.parse(res.body.toString())).toMatchObject({ status: 404, error: 'Not Found', validationErrors: null });
    }
    expectEnvelope(await via().get('/api/user/create').set(headers), 404);
    expectEnvelope(await direct('user').get(`/api/user/${attempt.userId}`).set('Authorization', admin.bearer), 404);
  });
});

describe('the book service’s internal stock routes', () => {
  it('answer 404 through the gateway with the right internal key, in any spelling, and hold nothing', async () => {
    const headers = { 'Content-Type': 'application/json', 'X-Internal-Api-Key': INTERNAL_KEY };
    const book = (await direct('book').get('/api/books/').query({ limit: 1 })).body as { id: string }[];
    const hold = { paymentId: randomUUID(), holdId: randomUUID(), userId: randomUUID(), items: book.map((b) => ({ bookId: b.id, quantity: 1 })) };
    for (const target of [
      '/api/books/internal/holds',
      '/API/Books/Internal/Holds',
      '/api/books/%69nternal/holds',
      '/api/books//internal/holds',
      '/api/books/x/../internal/holds/release',
      '/api/books/internal/stock/commit',
    ]) {
      const res = await rawRequest(gateway.url, 'POST', target, headers, JSON.stringify(hold));
      expect({ target, status: res.status }).toEqual({ target, status: 404 });
    }
    const released = await direct('book').post('/api/books/internal/holds/release').set(headers).send({ paymentId: hold.paymentId });
    expect(released.body).toEqual({ released: 0 });
  });
});

describe('paths no service owns', () => {
  it('answer the 404 envelope', async () => {
    for (const path of ['/', '/nope', '/authors', '/api', '/api/bookstore', '/api/users/me', '/analyticsx', '/actuator/nope']) {
      const res = await via().get(path);
      expectEnvelope(res, 404);
      expect(res.body.path).toBe(path);
    }
  });
});
