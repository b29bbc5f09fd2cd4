/**
 * The cost estimate against the answer (platform/query-cost.ts, platform/list-sizes.ts): for
 * generated queries over a seeded catalogue, with slicing arguments given as literals, as null, as
 * variables sent, sent null or not sent, with or without defaults, the answer is never costlier
 * than its estimate, at the gateway and at the book service's own port alike, and no list a client
 * sizes is longer than its slicing argument reads by the contract's rule (null or absent: the
 * schema default). The catalogue keeps the sizes the schema assumes where a client sizes nothing
 * (at most 5 authors a book, fewer authors, categories and publishers than the default list size).
 *
 * A failure prints fast-check's seed and path: replay it with FUZZ_SEED=<seed> FUZZ_PATH=<path>;
 * FUZZ_SCALE=10 runs ten times as many cases.
 */
import fc from 'fast-check';
import request from 'supertest';
import { graphqlHalf } from '../../gateway/graphql';
import { createLogger } from '../../platform/logger';
import { nextIsbn13 } from '../commerce';
import { startGateway, type RunningGateway } from '../gateway';
import { graphql, type GraphqlError } from '../graphql';
import { adminSession, startStack, type Stack } from '../harness';
import { fuzzRuns } from './arbitraries';

const BOOKS = 130;
const WORDS = ['harbour', 'lantern', 'meadow'];
/** The schema's defaults of `books` and `searchBooks` (`limit: Int = 20, offset: Int = 0`). */
const DEFAULT_LIMIT = 20;
const COST = { 'X-GraphQL-Cost': 'include' };

let stack: Stack;
let gateway: RunningGateway;
let bookIds: string[];

beforeAll(async () => {
  stack = await startStack({ services: ['book'] });
  const logger = createLogger('silent');
  gateway = await startGateway(stack.config, { logger, mountGraphql: graphqlHalf({ config: stack.config, logger }) });
  const admin = await adminSession(stack);
  const create = async (path: string, body: Record<string, unknown>) => {
    const res = await request(stack.urls.book).post(path).set('Authorization', admin.bearer).send(body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  };
  const authors: string[] = [];
  for (let i = 0; i < 6; i += 1) authors.push(await create('/api/authors/create', { firstName: `Writer${i}`, lastName: `Cost${i}` }));
  const categories = [await create('/api/categories/create', { name: 'Cost fiction' }), await create('/api/categories/create', { name: 'Cost history' })];
  const publishers = [await create('/api/publishers/create', { name: 'Cost House' }), await create('/api/publishers/create', { name: 'Cost Press' })];
  bookIds = [];
  for (let i = 0; i < BOOKS; i += 1) {
    bookIds.push(
      await create('/api/books/create', {
        isbn: nextIsbn13(),
        title: `The ${WORDS[i % WORDS.length]} of ${i}`,
        description: `A ${WORDS[(i + 1) % WORDS.length]} story.`,
        price: 5 + (i % 10),
        language: 'en',
        categoryId: categories[i % categories.length],
        publisherId: publishers[i % publishers.length],
        authorIds: authors.slice(0, 1 + (i % 5)).map((_, k) => authors[(i + k) % authors.length]),
      }),
    );
  }
}, 180_000);
afterAll(async () => {
  await gateway?.stop();
  await stack?.stop();
});

/** How a slicing argument (or offset) is written: left out, null, a literal, or a variable sent, sent null or not sent. */
type Given = { kind: 'absent' } | { kind: 'null' } | { kind: 'literal'; value: number } | { kind: 'variable'; sent: number | null | undefined; declaredDefault?: number };

const count = (max: number) => fc.oneof(fc.integer({ min: 1, max }), fc.constantFrom(0, -1, max + 1, DEFAULT_LIMIT, max));
const given = (max: number): fc.Arbitrary<Given> =>
  fc.oneof(
    fc.constant<Given>({ kind: 'absent' }),
    fc.constant<Given>({ kind: 'null' }),
    count(max).map((value): Given => ({ kind: 'literal', value })),
    fc
      .record({ sent: fc.oneof(count(max), fc.constant(null), fc.constant(undefined)), declaredDefault: fc.option(fc.integer({ min: 1, max }), { nil: undefined }) })
      .map((v): Given => ({ kind: 'variable', ...v })),
  );

/** What the answer's list may hold at most, by the contract's rule, for a limit written so (undefined: the request is refused). */
function limitOf(limit: Given): number | undefined {
  let value: number | null | undefined;
  if (limit.kind === 'literal') value = limit.value;
  else if (limit.kind === 'variable') value = limit.sent === undefined ? limit.declaredDefault : limit.sent;
  const read = value ?? DEFAULT_LIMIT;
  return read >= 1 && read <= 100 ? read : undefined;
}

const bookSelection = fc
  .subarray(['id', 'title', 'price', 'authors { id firstName }', 'category { id name }', 'publisher { id name }', 'stock'], { minLength: 1 })
  .map((fields) => fields.join(' '));

type Root =
  { field: 'books' | 'searchBooks'; limit: Given; offset: Given; selection: string; q: string | null } | { field: 'book'; index: number; selection: string } | { field: 'lists' };

const root: fc.Arbitrary<Root> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      field: fc.constant('books' as const),
      limit: given(100),
      offset: given(BOOKS + 10),
      selection: bookSelection,
      q: fc.constantFrom(null, 'The', 'Cost', 'zzz'),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      field: fc.constant('searchBooks' as const),
      limit: given(100),
      offset: given(BOOKS + 10),
      selection: bookSelection,
      q: fc.constantFrom(...WORDS, 'the', 'of', 'story'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ field: fc.constant('book' as const), index: fc.nat({ max: BOOKS - 1 }), selection: bookSelection }) },
  { weight: 1, arbitrary: fc.constant<Root>({ field: 'lists' }) },
);

interface Operation {
  query: string;
  variables: Record<string, unknown>;
  /** Per alias, the most items its list may hold (books: the list; searchBooks: its hits). */
  bounds: Map<string, number | undefined>;
}

function operationOf(roots: Root[]): Operation {
  const declarations: string[] = [];
  const variables: Record<string, unknown> = {};
  const bounds = new Map<string, number | undefined>();
  const argument = (name: string, value: Given, alias: string): string | undefined => {
    if (value.kind === 'absent') return undefined;
    if (value.kind === 'null') return `${name}: null`;
    if (value.kind === 'literal') return `${name}: ${value.value}`;
    const variable = `${alias}_${name}`;
    declarations.push(`$${variable}: Int${value.declaredDefault === undefined ? '' : ` = ${value.declaredDefault}`}`);
    if (value.sent !== undefined) variables[variable] = value.sent;
    return `${name}: $${variable}`;
  };
  const fields = roots.map((entry, i) => {
    const alias = `a${i}`;
    if (entry.field === 'book') return `${alias}: book(id: "${bookIds[entry.index]}") { ${entry.selection} }`;
    if (entry.field === 'lists') return `${alias}: authors { id lastName } c${i}: categories { id } p${i}: publishers { id }`;
    const args = [entry.q === null ? undefined : `q: ${JSON.stringify(entry.q)}`, argument('limit', entry.limit, alias), argument('offset', entry.offset, alias)].filter(Boolean);
    bounds.set(alias, limitOf(entry.limit));
    const list = args.length > 0 ? `${entry.field}(${args.join(', ')})` : entry.field;
    return entry.field === 'books' ? `${alias}: ${list} { ${entry.selection} }` : `${alias}: ${list} { total hits { book { ${entry.selection} } highlights { field fragment } } }`;
  });
  const header = declarations.length > 0 ? `query Sized(${declarations.join(', ')})` : 'query Sized';
  return { query: `${header} { ${fields.join(' ')} }`, variables, bounds };
}

interface Answer {
  status: number;
  body: { data?: Record<string, unknown> | null; errors?: GraphqlError[]; extensions?: { cost?: { estimated: number; actual?: number; max: number } } };
}

/** What must hold of an answer at either door. */
function check(door: string, operation: Operation, answer: Answer): void {
  const where = `${door}: ${operation.query} ${JSON.stringify(operation.variables)} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 400)}`;
  const codes = (answer.body.errors ?? []).map((error) => error.extensions?.code);
  if (answer.status >= 500 || codes.includes('INTERNAL_SERVER_ERROR')) throw new Error(`a server error: ${where}`);
  const cost = answer.body.extensions?.cost;
  if (answer.status === 400 && codes.includes('QUERY_TOO_COMPLEX')) {
    if (!cost || cost.estimated <= cost.max) throw new Error(`refused within the budget: ${where}`);
    return;
  }
  if (!cost || cost.actual === undefined) throw new Error(`no cost report: ${where}`);
  if (cost.actual > cost.estimated) throw new Error(`the answer (${cost.actual}) cost more than its estimate (${cost.estimated}): ${where}`);
  for (const [alias, bound] of operation.bounds) {
    const value = answer.body.data?.[alias] as unknown[] | { hits: unknown[] } | null | undefined;
    const items = Array.isArray(value) ? value : value?.hits;
    if (items === undefined) continue;
    if (bound === undefined) throw new Error(`${alias} answered despite a limit out of range: ${where}`);
    if (items.length > bound) throw new Error(`${alias} holds ${items.length}, more than its limit reads (${bound}): ${where}`);
  }
}

describe('the cost estimate against the answer, over a seeded catalogue', () => {
  it('is never below what the answer costs, nor a list longer than its limit reads, at the gateway and at the service', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(root, { minLength: 1, maxLength: 4 }), async (roots) => {
        const operation = operationOf(roots);
        for (const [door, url] of [
          ['gateway', gateway.url],
          ['book service', stack.urls.book],
        ] as const) {
          const answer = (await graphql(url, operation.query, { variables: operation.variables, headers: COST })) as Answer;
          check(door, operation, answer);
        }
      }),
      fuzzRuns<[Root[]]>(60, [
        // A null limit, literal or sent as a variable, once read as the whole catalogue.
        [[{ field: 'books', limit: { kind: 'null' }, offset: { kind: 'absent' }, selection: 'id', q: null }]],
        [[{ field: 'books', limit: { kind: 'variable', sent: null }, offset: { kind: 'absent' }, selection: 'id', q: null }]],
        // A search's hits, once costed at 20 whatever its limit.
        [[{ field: 'searchBooks', limit: { kind: 'literal', value: 100 }, offset: { kind: 'absent' }, selection: 'id', q: 'the' }]],
      ]),
    );
  }, 240_000);
});
