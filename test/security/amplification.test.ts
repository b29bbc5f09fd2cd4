/**
 * No amplification on a service's own port (issue 18, finding 1): the gateway's GraphQL limits are
 * installed by every subgraph, so a query sent straight to a service is refused the same way. The
 * reproduction is the nested `myPayments { user { payments { ... } } }` sent to the payment
 * service's port, which used to build a 368 MB answer; the other limits are checked on every
 * service's port with `_service`, a field every subgraph has.
 */
import { randomUUID } from 'node:crypto';
import { SERVICE_NAMES } from '../../platform/config';
import { createBook } from '../commerce';
import { errorCodes, graphql } from '../graphql';
import { adminSession, registeredUser, startStack, type Stack } from '../harness';

/** The services with a subgraph: all but auth, which answers only REST. */
const SUBGRAPHS = SERVICE_NAMES.filter((name) => name !== 'auth');

let stack: Stack;
let buyer: Awaited<ReturnType<typeof registeredUser>>;

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'] });
  buyer = await registeredUser(stack);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

/** `myPayments { user { payments { user { payments { user { userId } } } } } }`: six levels of selections. */
const SIX_LEVELS = '{ myPayments { user { payments { user { payments { user { userId } } } } } } }';

describe("a query sent to a service's own port", () => {
  it('six levels of payments and their user, to the payment service: refused as too complex, nothing run', async () => {
    const res = await graphql(stack.urls.payment, SIX_LEVELS, { bearer: buyer.bearer });
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toEqual([
      {
        message: 'Query is too complex: estimated cost 16840 exceeds the limit of 10000',
        extensions: { code: 'QUERY_TOO_COMPLEX', cost: { estimated: 16840, max: 10000 } },
      },
    ]);
  });

  it('the same operation two levels shorter is answered', async () => {
    const res = await graphql(stack.urls.payment, '{ myPayments { user { payments { paymentId } } } }', { bearer: buyer.bearer });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { myPayments: [] } });
  });

  it("a slicing argument given as a variable is counted at the value sent, by the book subgraph's own @listSize", async () => {
    const query = 'query ($n: Int) { books(limit: $n) { id title price } }';
    const huge = await graphql(stack.urls.book, query, { variables: { n: 100_000 } });
    expect(huge.status).toBe(400);
    expect(huge.body.errors).toEqual([
      { message: 'Query is too complex: estimated cost 100000 exceeds the limit of 10000', extensions: { code: 'QUERY_TOO_COMPLEX', cost: { estimated: 100000, max: 10000 } } },
    ]);
    const small = await graphql(stack.urls.book, query, { variables: { n: 5 } });
    expect(small.status).toBe(200);
    expect(small.body.errors).toBeUndefined();
  });

  it('a slicing argument given null, literally or as a variable, is its schema default: 20 books answered and costed, not the whole catalogue', async () => {
    const admin = await adminSession(stack);
    const tag = `Nulled ${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 25; i += 1) await createBook(stack, admin.bearer, `${tag} ${i}`, 3);
    const cases: [string, Record<string, unknown>][] = [
      ['{ books(limit: null) { id } }', {}],
      ['query ($l: Int) { books(limit: $l) { id } }', { l: null }],
      ['query ($l: Int = 20) { books(limit: $l) { id } }', { l: null }],
    ];
    for (const [query, variables] of cases) {
      const res = await graphql(stack.urls.book, query, { variables, headers: { 'X-GraphQL-Cost': 'include' } });
      expect(res.status).toBe(200);
      expect(res.body.extensions).toEqual({ cost: { estimated: 20, actual: 20, max: 10000 } });
      expect(res.body.data.books).toHaveLength(20);
    }
  });

  it("a search's hits are sized by its limit: 100 hits are costed as 100", async () => {
    const admin = await adminSession(stack);
    const word = `sized${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 25; i += 1) await createBook(stack, admin.bearer, `${word} ${i}`, 3);
    const res = await graphql(stack.urls.book, `{ searchBooks(q: "${word}", limit: 100) { total hits { book { id } } } }`, { headers: { 'X-GraphQL-Cost': 'include' } });
    expect(res.status).toBe(200);
    expect(res.body.data.searchBooks.hits).toHaveLength(25);
    // The page 1 + 100 hits × (1 + their book 1); the answer: 1 + 25 × 2.
    expect(res.body.extensions).toEqual({ cost: { estimated: 201, actual: 51, max: 10000 } });
  });

  it("the local mailbox's messages are sized by its limit, and a null limit is its default of 50", async () => {
    const admin = await adminSession(stack);
    const asked = (limit: string) =>
      graphql(stack.urls.auth, `{ localMailbox(limit: ${limit}) { messages { id } } }`, { bearer: admin.bearer, headers: { 'X-GraphQL-Cost': 'include' } });
    const large = await asked('200');
    expect(large.status).toBe(200);
    expect(large.body.extensions.cost.estimated).toBe(1 + 200);
    const nulled = await asked('null');
    expect(nulled.status).toBe(200);
    expect(nulled.body.extensions.cost.estimated).toBe(1 + 50);
  });

  it('deeper than 10 levels, to the payment service: refused as too deep', async () => {
    const deep = `{ myPayments { ${'user { payments { '.repeat(5)}paymentId${' } }'.repeat(5)} } }`;
    const res = await graphql(stack.urls.payment, deep, { bearer: buyer.bearer });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ message: 'Query depth limit of 10 exceeded, found 12.', extensions: { code: 'QUERY_TOO_COMPLEX' } });
  });

  it.each(SUBGRAPHS)('to the %s service: more than 15 aliases are refused, and a misspelt field gets no suggestion', async (name) => {
    const aliases = Array.from({ length: 16 }, (_, i) => `s${i}: _service { sdl }`).join(' ');
    const flooded = await graphql(stack.urls[name], `{ ${aliases} }`);
    expect(flooded.status).toBe(400);
    expect(flooded.body.errors).toEqual([{ message: 'Aliases limit of 15 exceeded, found 16.', extensions: { code: 'QUERY_TOO_COMPLEX' } }]);

    const misspelt = await graphql(stack.urls[name], '{ _servic { sdl } }');
    expect(errorCodes(misspelt.body)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(misspelt.body.errors[0].message).not.toMatch(/Did you mean/);
  });

  it.each(SUBGRAPHS)('to the %s service: a document over 2,000 tokens is refused before it is read', async (name) => {
    const res = await graphql(stack.urls[name], `{ ${'_service { sdl } '.repeat(700)}}`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/^Syntax Error: Document contains more tha[nt] 2000 tokens/), extensions: { code: 'GRAPHQL_PARSE_FAILED' } }),
    ]);
  });
});
