/**
 * Property-based fuzzing of the gateway's federated GraphQL endpoint (issue 8, item 3): generated
 * documents, variables, operation names and request envelopes never get a 5xx or an internal error,
 * never show a stack trace, and the system is healthy afterwards with nothing logged at error level.
 *
 * A failure prints fast-check's seed and path: replay it with FUZZ_SEED=<seed> FUZZ_PATH=<path>;
 * FUZZ_SCALE=10 runs ten times as many cases.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import fc from 'fast-check';
import { orderOf, paidPurchase } from '../graphql';
import { adminSession, registeredUser } from '../harness';
import { captureLog, expectSaneGraphql, send, startSystem, type Answer, type System } from '../hostile';
import { contentType, encodeSegment, fuzzRuns, headerValue, hostileBody, hostileString, mutatedObjectText, mutatedText } from './arbitraries';

const log = captureLog('warn');
let system: System;
let agent: http.Agent;
let admin: Awaited<ReturnType<typeof adminSession>>;
let buyer: Awaited<ReturnType<typeof registeredUser>>;
let paymentId: string;
let orderId: string;
let bookId: string;

beforeAll(async () => {
  system = await startSystem({ logger: log.logger });
  agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  admin = await adminSession(system.stack);
  buyer = await registeredUser(system.stack);
  const purchase = await paidPurchase(system.stack, buyer.bearer, admin.bearer);
  paymentId = purchase.paymentId;
  bookId = purchase.books[0].id;
  orderId = await orderOf(system.stack, buyer.bearer, paymentId);
}, 60_000);
afterAll(async () => {
  agent?.destroy();
  await system?.stop();
});

type Caller = 'anonymous' | 'buyer' | 'admin' | 'garbage';
const caller = fc.constantFrom<Caller>('admin', 'admin', 'buyer', 'buyer', 'anonymous', 'garbage');
const authorization = (who: Caller): Record<string, string> =>
  who === 'admin' ? { Authorization: admin.bearer } : who === 'buyer' ? { Authorization: buyer.bearer } : who === 'garbage' ? { Authorization: 'Bearer not.a.token' } : {};

function post(headers: Record<string, string>, body: string): Promise<Answer> {
  return send(system.url, { method: 'POST', path: '/graphql', headers, body, agent });
}

/** Every query and mutation of the supergraph, each with variables that make it valid. */
function operations(): { query: string; variables: Record<string, unknown> }[] {
  const profile = { firstName: 'Fuzz', lastName: 'Tester', phoneNumber: '+14155550100', dateOfBirth: '1990-05-17', address: '1 Fuzz Street' };
  return [
    {
      query:
        'query Books($q: String, $limit: Int, $offset: Int) { books(q: $q, limit: $limit, offset: $offset) { id title price stock coverImageUrl authors { id firstName lastName } category { name } publisher { name } } }',
      variables: { q: 'a', limit: 5, offset: 0 },
    },
    { query: '{ authors { id firstName lastName biography country } categories { id name description } publishers { id name address } }', variables: {} },
    { query: 'query ($id: ID!) { book(id: $id) { id title price sales { quantitySold revenue } } }', variables: { id: bookId } },
    { query: '{ me { userId email payments { paymentId amount } orders { orderId status } } }', variables: {} },
    { query: 'query ($id: ID!) { user(userId: $id) { userId email payments { paymentId } orders { orderId } } }', variables: { id: buyer.userId } },
    { query: '{ users { userId email createdAt } }', variables: {} },
    { query: 'query ($k: String!) { searchUsers(keyword: $k) { userId email } }', variables: { k: 'read' } },
    {
      query: 'query ($s: OrderStatus, $limit: Int, $offset: Int) { orders(status: $s, limit: $limit, offset: $offset) { orderId status totalAmount } }',
      variables: { s: 'CONFIRMED', limit: 10, offset: 0 },
    },
    { query: 'query ($id: ID!) { order(orderId: $id) { orderId payment { paymentId status } user { email } items { quantity book { title } } } }', variables: { id: orderId } },
    { query: '{ myOrders { orderId totalAmount } myPayments { paymentId amount items { bookTitle price } } }', variables: {} },
    { query: 'query ($id: ID!) { payment(paymentId: $id) { paymentId amount status order { orderId } user { userId } } }', variables: { id: paymentId } },
    { query: '{ dashboard { totalOrders paidOrders totalRevenue averageOrderValue booksSold paymentSuccessRate } }', variables: {} },
    {
      query:
        'query ($from: String, $to: String) { revenueReport(from: $from, to: $to) { totalRevenue daily { date revenue } monthly { month revenue } } orderReport(from: $from, to: $to) { totalOrders daily { date } } }',
      variables: { from: '2020-01-01', to: '2030-12-31' },
    },
    { query: '{ bookReport { booksSold topBooks { bookId quantitySold revenue book { title } } } paymentReport { paidOrders refundedAmount paymentSuccessRate } }', variables: {} },
    { query: 'mutation ($id: ID!, $input: UserInput!) { updateUser(userId: $id, input: $input) { userId firstName } }', variables: { id: buyer.userId, input: profile } },
    { query: 'mutation ($id: ID!) { deleteUser(userId: $id) }', variables: { id: randomUUID() } },
    { query: 'mutation ($id: ID!, $s: OrderStatus!) { updateOrderStatus(orderId: $id, status: $s) { orderId status } }', variables: { id: orderId, s: 'PROCESSING' } },
    { query: 'mutation ($id: ID!) { cancelOrder(orderId: $id) { orderId status } }', variables: { id: randomUUID() } },
  ];
}

const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')} }`;

/** Documents that have hurt GraphQL servers: floods, cycles, depth, size, and what the supergraph hides. */
const NOTORIOUS_DOCUMENTS = [
  '',
  ' ',
  '{',
  '}',
  '{}',
  'query',
  '{ __typename }',
  aliases(200),
  aliases(3000),
  `{ ${'books { '.repeat(40)}id${' }'.repeat(40)} }`,
  `{ ${'a { '.repeat(3000)}b${' }'.repeat(3000)} }`,
  'fragment A on Query { ...B } fragment B on Query { ...A } { ...A }',
  `{ __typename ${'@skip(if: false) '.repeat(2000)} }`,
  `{ books(q: "${'x'.repeat(100_000)}") { id } }`,
  '{ books(limit: 2147483647) { id } }',
  '{ books(limit: 100) { id authors { firstName } sales { quantitySold } } }',
  '{ books(offset: -1) { id } }',
  '{ _service { sdl } }',
  '{ _entities(representations: [{ __typename: "Payment", paymentId: "x" }]) { __typename } }',
  '{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name } } } } } } } }',
  'subscription { books { id } }',
  'query A { __typename } query B { __typename }',
  'mutation { __typename }',
  '{ payment(paymentId: "x") { clientSecret } }',
  '{ me { passwordHash } }',
  'query ($a: Int = "x") { __typename }',
  'query ($a: [[[[[[[[[[Int]]]]]]]]]]) { __typename }',
  '{ book(id: "\\u0000") { id } }',
  '# just a comment',
  '\ufeff{ __typename }',
];

const GRAPHQL_ALPHABET = '{}()[]:$@!.,="\\#\n abcdefghijklmnopqrstuvwxyz0123456789_ABC';

/** A request body: an operation with hostile variables, a mutated or random document, or a notorious one. */
const requestBody = fc.nat().chain((index) => {
  const all = operations();
  const operation = all[index % all.length];
  return fc.oneof(
    { weight: 4, arbitrary: mutatedObjectText(operation.variables).map((variables) => `{"query":${JSON.stringify(operation.query)},"variables":${variables}}`) },
    { weight: 3, arbitrary: mutatedText(operation.query, GRAPHQL_ALPHABET).map((query) => JSON.stringify({ query, variables: operation.variables })) },
    {
      weight: 2,
      arbitrary: fc
        .record({ operationName: fc.option(fc.oneof(hostileString, fc.constantFrom('Books', 'A', 'B'))), extensions: fc.option(fc.jsonValue({ maxDepth: 3 })) })
        .map(({ operationName, extensions }) => JSON.stringify({ query: operation.query, variables: operation.variables, operationName, extensions })),
    },
    { weight: 1, arbitrary: hostileBody({ query: operation.query, variables: operation.variables, operationName: null }) },
  );
});
const documentBody = fc.oneof(
  fc.constantFrom(...NOTORIOUS_DOCUMENTS).map((query) => JSON.stringify({ query })),
  fc.string({ unit: fc.constantFrom(...GRAPHQL_ALPHABET), maxLength: 200 }).map((query) => JSON.stringify({ query })),
  hostileString.map((query) => JSON.stringify({ query })),
  fc.constantFrom(...NOTORIOUS_DOCUMENTS).map((query) => JSON.stringify({ query, extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } })),
  fc.constant(JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } })),
  fc.constant(JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }])),
);

describe('generated GraphQL requests through the gateway', () => {
  it('operations with hostile variables, mutated documents and request envelopes: never a 5xx, an internal error or a stack trace', async () => {
    await fc.assert(
      fc.asyncProperty(caller, contentType, requestBody, async (who, type, body) => {
        const headers = { ...authorization(who), ...(type === undefined ? {} : { 'Content-Type': type }) };
        expectSaneGraphql(await post(headers, body));
      }),
      // An operationName naming no operation (even "") was a 500 from the gateway's executor.
      fuzzRuns<[Caller, string | undefined, string]>(400, [
        ['admin', 'application/json', JSON.stringify({ query: 'query Books { books { id } }', operationName: '' })],
        ['buyer', 'application/json', JSON.stringify({ query: '{ __typename }', operationName: 'Nope' })],
        ['anonymous', 'application/json', JSON.stringify({ query: 'query A { __typename } query B { __typename }' })],
      ]),
    );
  }, 120_000);

  it('random and notorious documents: never a 5xx, an internal error or a stack trace', async () => {
    await fc.assert(
      fc.asyncProperty(caller, documentBody, async (who, body) => {
        expectSaneGraphql(await post({ ...authorization(who), 'Content-Type': 'application/json' }, body));
      }),
      // A subscription was a 500; thousands of nested braces overflowed the parser's stack; a persisted
      // query hash that does not match was an INTERNAL_SERVER_ERROR; a 60,000-character keyword was more
      // than SQLite takes as a LIKE pattern.
      fuzzRuns<[Caller, string]>(250, [
        ['admin', JSON.stringify({ query: 'subscription { books { id } }' })],
        ['admin', JSON.stringify({ query: `{ ${'a { '.repeat(3000)}b${' }'.repeat(3000)} }` })],
        ['admin', JSON.stringify({ query: '{ __typename }', extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } })],
        ['admin', JSON.stringify({ query: 'query ($k: String!) { searchUsers(keyword: $k) { userId } }', variables: { k: 'x'.repeat(60_000) } })],
      ]),
    );
  }, 120_000);

  it('GET requests with generated query parameters and headers: never a 5xx, an internal error or a stack trace', async () => {
    const parameters = fc.record(
      {
        query: fc.oneof(
          fc.constantFrom(...NOTORIOUS_DOCUMENTS.filter((doc) => doc.length < 5000)),
          fc.constantFrom(...operations().map((op) => op.query)),
          hostileString.filter((s) => s.length < 3000),
        ),
        variables: fc.oneof(
          fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
          hostileString.filter((s) => s.length < 3000),
        ),
        operationName: hostileString.filter((s) => s.length < 200),
        extensions: fc.constantFrom('{}', '{"persistedQuery":{"version":1,"sha256Hash":"abc"}}', 'x'),
      },
      { requiredKeys: [] },
    );
    const preflight = fc.record(
      { 'Apollo-Require-Preflight': fc.constantFrom('1', ''), 'Content-Type': fc.constantFrom('application/json', 'text/plain'), 'X-Request-Id': headerValue },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(caller, parameters, preflight, async (who, params, headers) => {
        const search = Object.entries(params)
          .map(([name, value]) => `${name}=${encodeSegment(value)}`)
          .join('&');
        expectSaneGraphql(await send(system.url, { method: 'GET', path: `/graphql?${search}`, headers: { ...authorization(who), ...headers }, agent }));
      }),
      fuzzRuns<[Caller, Record<string, string>, Record<string, string>]>(200, [['admin', { query: '{ __typename }', operationName: '' }, { 'Content-Type': 'application/json' }]]),
    );
  }, 120_000);
});

describe('after the GraphQL fuzzing', () => {
  it('the gateway and every subgraph are still UP, and a real query still answers', async () => {
    const health = await send(system.url, { method: 'GET', path: '/actuator/health', agent });
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ status: 'UP' });
    const answer = await post(
      { Authorization: buyer.bearer, 'Content-Type': 'application/json' },
      JSON.stringify({ query: 'query ($id: ID!) { payment(paymentId: $id) { paymentId status } }', variables: { id: paymentId } }),
    );
    expect(answer.json).toEqual({ data: { payment: { paymentId, status: 'SUCCESS' } } });
  });

  it('nothing was logged at error level', () => {
    const errors = log.entriesAtLeast(50).map((entry) => ({ msg: entry.msg, message: entry.message, err: (entry.err as { message?: string } | undefined)?.message }));
    expect(errors).toEqual([]);
  });
});
