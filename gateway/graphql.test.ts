import express from 'express';
import type { AddressInfo } from 'node:net';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { createLogger } from '../platform/logger';
import type { Config } from '../platform/config';
import { adminSession, registeredUser, startStack, type Stack } from '../test/harness';
import { errorCodes, graphql, leaksInternals, orderOf, paidPurchase } from '../test/graphql';
import { createGraphqlGateway, graphqlHalf } from './graphql';
import { createGateway, type GatewayRuntime } from './index';

const logger = createLogger('silent');

describe('the federated API through the gateway', () => {
  let stack: Stack;
  let gateway: GatewayRuntime;
  let url: string;
  let admin: Awaited<ReturnType<typeof adminSession>>;

  beforeAll(async () => {
    stack = await startStack({ services: ['book', 'order', 'payment'] });
    gateway = await createGateway({ config: stack.config, logger, mountGraphql: graphqlHalf({ config: stack.config, logger }) });
    url = `http://127.0.0.1:${await gateway.start(0, '127.0.0.1')}`;
    admin = await adminSession(stack);
  });
  afterAll(async () => {
    await gateway?.stop();
    await stack?.stop();
  });

  const gql = (query: string, bearer?: string, variables?: Record<string, unknown>) => graphql(url, query, { bearer, variables });

  const PAYMENT_ACROSS_SUBGRAPHS = `query ($id: ID!) {
    payment(paymentId: $id) {
      paymentId amount status
      user { userId email lastName }
      order { orderId status totalAmount items { quantity price book { id title price } } }
    }
  }`;

  it("answers a payment with its user, its order and the order's books after a real purchase", async () => {
    const buyer = await registeredUser(stack);
    const purchase = await paidPurchase(stack, buyer.bearer, admin.bearer);
    const orderId = await orderOf(stack, buyer.bearer, purchase.paymentId);

    const res = await gql(PAYMENT_ACROSS_SUBGRAPHS, buyer.bearer, { id: purchase.paymentId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        payment: {
          paymentId: purchase.paymentId,
          amount: '60.08',
          status: 'SUCCESS',
          user: { userId: buyer.userId, email: buyer.email, lastName: 'Reader' },
          order: {
            orderId,
            status: 'CONFIRMED',
            totalAmount: '60.08',
            items: [
              { quantity: 2, price: '29.99', book: { id: purchase.books[0].id, title: purchase.books[0].title, price: '29.99' } },
              { quantity: 1, price: '0.10', book: { id: purchase.books[1].id, title: 'Bookmark', price: '0.10' } },
            ],
          },
        },
      },
    });
  });

  it('gives an ADMIN a user with their payments and orders, and the orders with their payments', async () => {
    const buyer = await registeredUser(stack);
    const purchase = await paidPurchase(stack, buyer.bearer, admin.bearer);
    const orderId = await orderOf(stack, buyer.bearer, purchase.paymentId);
    const res = await gql('query ($id: ID!) { user(userId: $id) { email payments { paymentId orderId } orders { orderId payment { paymentId status } } } }', admin.bearer, {
      id: buyer.userId,
    });
    expect(res.body).toEqual({
      data: {
        user: {
          email: buyer.email,
          payments: [{ paymentId: purchase.paymentId, orderId }],
          orders: [{ orderId, payment: { paymentId: purchase.paymentId, status: 'SUCCESS' } }],
        },
      },
    });
  });

  it('tells another USER that the payment does not exist, and an anonymous caller to authenticate', async () => {
    const [owner, other] = [await registeredUser(stack), await registeredUser(stack)];
    const purchase = await paidPurchase(stack, owner.bearer, admin.bearer);

    const denied = await gql(PAYMENT_ACROSS_SUBGRAPHS, other.bearer, { id: purchase.paymentId });
    expect(denied.status).toBe(200);
    expect(denied.body.data).toEqual({ payment: null });
    expect(denied.body.errors).toEqual([
      { message: `Payment not found: ${purchase.paymentId}`, path: ['payment'], extensions: { code: 'NOT_FOUND', reason: 'PAYMENT_NOT_FOUND' } },
    ]);

    const anonymous = await gql(PAYMENT_ACROSS_SUBGRAPHS, undefined, { id: purchase.paymentId });
    expect(errorCodes(anonymous.body)).toEqual(['UNAUTHENTICATED']);
    const forged = await gql('{ users { userId } }', 'Bearer forged.token.here');
    expect(errorCodes(forged.body)).toEqual(['UNAUTHENTICATED']);
    const asUser = await gql('{ users { userId } }', other.bearer);
    expect(errorCodes(asUser.body)).toEqual(['FORBIDDEN']);
    expect(leaksInternals(denied.body) || leaksInternals(anonymous.body) || leaksInternals(asUser.body)).toBe(false);
  });

  it('answers many identical queries from two users at once, each with their own data', async () => {
    const [ann, bob] = [await registeredUser(stack), await registeredUser(stack)];
    const asked = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? ann : bob));
    const answers = await Promise.all(asked.map((user) => gql('{ me { userId email } }', user.bearer)));
    answers.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { me: { userId: asked[i].userId, email: asked[i].email } } });
    });
  });

  it('serves the public catalogue without a token', async () => {
    const res = await gql('{ books(limit: 1) { id } }');
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(Array.isArray(res.body.data.books)).toBe(true);
  });

  it('refuses a query nested deeper than 10 levels with QUERY_TOO_COMPLEX', async () => {
    const deep = '{ order(orderId: "x") { payment { order { payment { order { payment { order { payment { order { payment { order { orderId } } } } } } } } } } } }';
    const res = await gql(deep, admin.bearer);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ message: 'Query depth limit of 10 exceeded, found 12.', extensions: { code: 'QUERY_TOO_COMPLEX' } }]);
  });

  it('refuses a query whose estimated cost is over the budget, with the estimate, counting list sizes and fragments', async () => {
    const aliases = Array.from({ length: 10 }, (_, i) => `o${i}: orders(limit: 2000) { ...line }`).join(' ');
    const res = await gql(`{ ${aliases} } fragment line on Order { orderId status }`, admin.bearer);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      errors: [
        {
          message: 'Query is too complex: estimated cost 20000 exceeds the limit of 10000',
          extensions: { code: 'QUERY_TOO_COMPLEX', cost: { estimated: 20000, max: 10000 } },
        },
      ],
    });
  });

  it('reports the estimated and the actual cost in extensions when the request asks with X-GraphQL-Cost: include', async () => {
    // books 3 × (1 + authors 5 (@listSize assumedSize) × 1)
    const query = 'query ($n: Int) { books(limit: $n) { id title authors { firstName } } }';
    const asked = await graphql(url, query, { variables: { n: 3 }, headers: { 'X-GraphQL-Cost': 'include' } });
    expect(asked.status).toBe(200);
    // The actual cost counts the answer: each book and each of its authors.
    const books = asked.body.data.books as { authors: unknown[] }[];
    const actual = books.reduce((sum, book) => sum + 1 + book.authors.length, 0);
    expect(asked.body.extensions).toEqual({ cost: { estimated: 18, actual, max: 10000 } });
    const plain = await gql(query, undefined, { n: 3 });
    expect(plain.status).toBe(200);
    expect(plain.body.extensions).toBeUndefined();
  });

  it('answers small lists nested three deep, which the former 20-per-list heuristic refused', async () => {
    // Formerly every field 1 and 20 a list: 67,201. Now orders (limit's default 50) × (1 + items 20 × (1 + book 1 + authors 5)) = 7,050.
    const res = await gql('{ orders { orderId status totalAmount items { quantity price bookTitle book { id title authors { id firstName lastName } } } } }', admin.bearer);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
  });

  it('answers a JSON post the same before the app as through it, request id and errors included', async () => {
    // `application/json` takes the front path (GraphqlGateway.front); a quoted charset goes through the app's express.json().
    const post = async (body: string, front: boolean, headers: Record<string, string> = {}) => {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'Content-Type': front ? 'application/json' : 'application/json; charset="utf-8"', Authorization: admin.bearer, ...headers },
        body,
      });
      return {
        status: res.status,
        type: res.headers.get('content-type'),
        nosniff: res.headers.get('x-content-type-options'),
        id: res.headers.get('x-request-id'),
        body: await res.text(),
      };
    };
    const bodies = [
      JSON.stringify({ query: '{ books(limit: 2) { title } }' }),
      JSON.stringify({ query: 'query Q($n: Int) { books(limit: $n) { title } }', variables: { n: 1 }, operationName: 'Q' }),
      `\uFEFF${JSON.stringify({ query: '{ __typename }' })}`,
      JSON.stringify({ query: '{ nope }' }),
      JSON.stringify({ query: '{ __typename }', operationName: 'Missing' }),
      '{"query":',
      '"{ __typename }"',
      '  [1]',
      '',
      'null',
    ];
    for (const body of bodies) {
      const [viaFront, viaApp] = [await post(body, true, { 'X-Request-Id': 'same-id' }), await post(body, false, { 'X-Request-Id': 'same-id' })];
      expect({ sent: body, ...viaFront }).toEqual({ sent: body, ...viaApp });
      expect(viaFront.nosniff).toBe('nosniff');
      expect(viaFront.id).toBe('same-id');
    }
    expect((await post(bodies[0], true)).id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers malformed JSON on /graphql as a GraphQL error, and keeps the REST routes', async () => {
    const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"query":' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ errors: [{ message: 'Malformed JSON request body', extensions: { code: 'BAD_REQUEST' } }] });
    const rest = await fetch(`${url}/api/books/?limit=1`);
    expect(rest.status).toBe(200);
  });
});

describe("the gateway's subgraph requests", () => {
  let recorder: Server;
  const seen: { headers: IncomingHttpHeaders; body: { query?: string } }[] = [];

  beforeAll(async () => {
    const app = express();
    app.use(express.json());
    app.post('/graphql', (req, res) => {
      seen.push({ headers: req.headers, body: req.body });
      res.json({ data: { books: [{ __typename: 'Book', id: 'b1' }] } });
    });
    recorder = await new Promise<Server>((resolve) => {
      const server = app.listen(0, '127.0.0.1', () => resolve(server));
    });
  });
  afterAll(async () => {
    await new Promise((resolve) => recorder.close(resolve));
  });

  it("go to the service's current URL, carrying the caller's Authorization and X-Request-Id; a down subgraph is a generic error", async () => {
    const urls = { book: 'http://127.0.0.1:1', order: 'http://127.0.0.1:1' } as Config['urls'];
    const graphqlGateway = createGraphqlGateway({ config: { urls, apolloTelemetryDisabled: true }, logger });
    const app = express();
    await graphqlGateway.mount(app);
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      // Set after the gateway loaded: the URL is read when the request is sent.
      urls.book = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
      const res = await graphql(base, '{ books { id } }', { bearer: 'Bearer abc.def.ghi', headers: { 'X-Request-Id': 'req-42' } });
      expect(res.body).toEqual({ data: { books: [{ id: 'b1' }] } });
      expect(seen).toHaveLength(1);
      expect(seen[0].headers.authorization).toBe('Bearer abc.def.ghi');
      expect(seen[0].headers['x-request-id']).toBe('req-42');
      expect(seen[0].body.query).toMatch(/books/);

      const down = await graphql(base, '{ orders { orderId } }', { bearer: 'Bearer abc.def.ghi' });
      expect(down.body.errors).toEqual([expect.objectContaining({ message: 'An unexpected error occurred', extensions: { code: 'INTERNAL_SERVER_ERROR' } })]);
      expect(JSON.stringify(down.body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|stacktrace/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await graphqlGateway.stop();
    }
  });
});

describe("what the gateway makes of a subgraph's answer", () => {
  let answer: { status: number; headers: Record<string, string>; body: string };
  let subgraph: Server;
  let server: Server;
  let base: string;
  let graphqlGateway: ReturnType<typeof createGraphqlGateway>;

  beforeAll(async () => {
    subgraph = await new Promise<Server>((resolve) => {
      const s = express()
        .post('/graphql', (_req, res) => {
          res.status(answer.status).set(answer.headers).send(answer.body);
        })
        .listen(0, '127.0.0.1', () => resolve(s));
    });
    const urls = { book: `http://127.0.0.1:${(subgraph.address() as AddressInfo).port}` } as Config['urls'];
    graphqlGateway = createGraphqlGateway({ config: { urls, apolloTelemetryDisabled: true }, logger });
    const app = express();
    await graphqlGateway.mount(app);
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await graphqlGateway.stop();
    await new Promise((resolve) => subgraph.close(resolve));
  });

  const json = { 'content-type': 'application/json' };

  it('passes a 401 on as UNAUTHENTICATED and a 403 as FORBIDDEN, without the raw answer', async () => {
    for (const [status, code] of [
      [401, 'UNAUTHENTICATED'],
      [403, 'FORBIDDEN'],
    ] as const) {
      answer = { status, headers: json, body: JSON.stringify({ secret: 'internal detail' }) };
      const res = await graphql(base, '{ books { id } }');
      expect(res.status).toBe(200);
      expect(errorCodes(res.body)).toEqual([code]);
      expect(JSON.stringify(res.body)).not.toMatch(/internal detail|127\.0\.0\.1/);
    }
  });

  it('answers a generic internal error for a 500 page, a body that is not a JSON object, or broken JSON', async () => {
    for (const bad of [
      { status: 500, headers: { 'content-type': 'text/html' }, body: '<h1>boom</h1>' },
      { status: 200, headers: json, body: '[1, 2]' },
      { status: 200, headers: { 'content-type': 'text/plain' }, body: 'not json' },
      { status: 200, headers: json, body: '{"data":' },
    ]) {
      answer = bad;
      const res = await graphql(base, '{ books { id } }');
      expect(res.status).toBe(200);
      expect(res.body.errors).toEqual([expect.objectContaining({ message: 'An unexpected error occurred', extensions: { code: 'INTERNAL_SERVER_ERROR' } })]);
      expect(JSON.stringify(res.body)).not.toMatch(/boom|not json|127\.0\.0\.1/);
    }
  });

  it("makes an answer cacheable only as far as the subgraph's Cache-Control allows", async () => {
    const books = JSON.stringify({ data: { books: [{ __typename: 'Book', id: 'b1' }] } });
    answer = { status: 200, headers: { ...json, 'cache-control': 'max-age=60, public' }, body: books };
    const cacheable = await graphql(base, '{ books { id } }');
    expect(cacheable.body).toEqual({ data: { books: [{ id: 'b1' }] } });
    expect(cacheable.headers['cache-control']).toBe('max-age=60, public');
    answer = { status: 200, headers: json, body: books };
    expect((await graphql(base, '{ books { id } }')).headers['cache-control']).toBe('no-store');
  });
});
