import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'graphql';
import { sizingProblems } from '../platform/list-sizes';
import { costDirectivesOf } from '../platform/query-cost';
import { gatewayLoadProblems, generatedTypesProblems, operationProblems, runSchemaChecks, stalenessProblems, ACKNOWLEDGED_FILE, OPERATIONS_DIR } from './check';
import { schemaChanges } from './changes';
import { ADMIN_DOCUMENTS_FILE, committedSources, generatedFiles, generatedStaleness, resolverTypesFile } from './codegen';
import { documentId } from '../gateway/trusted-documents';
import { manifestProblems, PERSISTED_DOCUMENTS_FILE } from './persisted-documents';
import { apiSchemaOf, composeSubgraphs, projectRoot, readSubgraphs, writeComposition, SUPERGRAPH_FILE, type Composition, type SubgraphSdl } from './compose';

const root = projectRoot();
const real = () => readSubgraphs(root);

/** The real subgraphs with one SDL edited. */
function edited(name: string, edit: (sdl: string) => string): SubgraphSdl[] {
  return real().map((subgraph) => (subgraph.name === name ? { ...subgraph, sdl: edit(subgraph.sdl) } : subgraph));
}

function composed(subgraphs: SubgraphSdl[]): Extract<Composition, { ok: true }> {
  const composition = composeSubgraphs(subgraphs);
  if (!composition.ok) throw new Error(composition.errors.join('\n'));
  return composition;
}

const withoutMyOrders = () => edited('order', (sdl) => sdl.replace(/\s*"The caller's orders, newest first."\s*myOrders: \[Order!\]!/, ''));

function tempRoot(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'schema-check-'));
}

/** The admin UI's operations, copied into `dir`, and the types the subgraphs and operations generate there. */
async function writeGenerated(dir: string, subgraphs: SubgraphSdl[]): Promise<void> {
  fs.cpSync(path.join(root, 'gateway', 'admin', 'operations'), path.join(dir, 'gateway', 'admin', 'operations'), { recursive: true });
  for (const { file, content } of await generatedFiles({ root: dir, subgraphs, supergraphSdl: composed(subgraphs).supergraphSdl })) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
}

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, '-c', 'user.email=ci@bookstore.test', '-c', 'user.name=CI', '-c', 'commit.gpgsign=false', ...args], { encoding: 'utf8' });
}

describe('the committed schema', () => {
  it('is what the subgraphs compose to now, and @apollo/gateway loads it', async () => {
    const composition = composed(real());
    expect(stalenessProblems(root, composition)).toEqual([]);
    expect(await gatewayLoadProblems(composition.supergraphSdl)).toEqual([]);
  });
});

describe('composition', () => {
  it("fails when a subgraph disagrees on a shared field's type", () => {
    const composition = composeSubgraphs(
      edited('order', (sdl) =>
        sdl.replace('type Book @key(fields: "id", resolvable: false) {\n  id: ID!', 'type Book @key(fields: "id", resolvable: false) {\n  id: ID!\n  title: Int'),
      ),
    );
    expect(composition.ok).toBe(false);
    expect(composition.ok ? [] : composition.errors.join('\n')).toMatch(/Book\.title/);
  });

  it('names the file of a subgraph SDL that does not parse', () => {
    const composition = composeSubgraphs(edited('payment', (sdl) => `${sdl}\ntype Broken {`));
    expect(composition).toMatchObject({ ok: false, errors: [expect.stringMatching(/^\[payment\] subgraphs\/payment\/schema\.graphql: Syntax Error/)] });
  });

  it('passes a Router-only feature but the gateway refuses to load it', async () => {
    const composition = composed(
      edited('book', (sdl) =>
        sdl
          .replace('import: ["@key", "@cost", "@listSize"]', 'import: ["@key", "@cost", "@listSize", "@authenticated"]')
          .replace('  stock: Int\n', '  stock: Int @authenticated\n'),
      ),
    );
    expect(await gatewayLoadProblems(composition.supergraphSdl)).toEqual([expect.stringMatching(/authenticated.*unsupported/)]);
  });
});

describe('breaking changes', () => {
  const current = () => composed(real()).supergraphSdl;

  it('reports a removed field with the coordinate it concerns, by GraphQL Inspector', async () => {
    expect(await schemaChanges(current(), composed(withoutMyOrders()).supergraphSdl)).toEqual([
      { type: 'FIELD_REMOVED', path: 'Query.myOrders', message: "Field 'myOrders' was removed from object type 'Query'", criticality: 'BREAKING' },
    ]);
  });

  it('finds none for an added optional argument, and reports nothing from federation-only parts', async () => {
    const added = edited('book', (sdl) => sdl.replace('book(id: ID!): Book', 'book(id: ID!, isbn: String): Book'));
    expect((await schemaChanges(current(), composed(added).supergraphSdl)).filter((change) => change.criticality === 'BREAKING')).toEqual([]);
    expect(apiSchemaOf(current()).getQueryType()?.getFields()._entities).toBeUndefined();
  });
});

describe('the whole check against git history', () => {
  it('compares with the previous committed supergraph, fails until the break is acknowledged, and flags staleness', async () => {
    const dir = tempRoot();
    try {
      fs.mkdirSync(path.join(dir, 'schema'));
      writeComposition(dir, composed(real()));
      await writeGenerated(dir, real());
      git(dir, 'init', '-q');
      git(dir, 'add', '.');
      git(dir, 'commit', '-q', '-m', 'first schema');

      const first = await runSchemaChecks(dir, { subgraphs: real() });
      expect(first.lines.join('\n')).toMatch(/nothing to compare with/);
      expect(first.ok).toBe(true);

      const stale = await runSchemaChecks(dir, { subgraphs: withoutMyOrders() });
      expect(stale.ok).toBe(false);
      expect(stale.lines.join('\n')).toMatch(/FAIL committed supergraph is up to date\n {2}schema\/supergraph.graphql is stale/);

      writeComposition(dir, composed(withoutMyOrders()));
      const broken = await runSchemaChecks(dir, { subgraphs: withoutMyOrders() });
      expect(broken.ok).toBe(false);
      expect(broken.changes).toEqual([expect.objectContaining({ type: 'FIELD_REMOVED', path: 'Query.myOrders', criticality: 'BREAKING', verdict: 'fail' })]);
      expect(broken.usage).toMatchObject({ source: 'none', windowDays: 7, noUsageReason: 'no usage source: set SCHEMA_REGISTRY_URL or SCHEMA_USAGE_FILE' });
      expect(broken.lines.join('\n')).toMatch(
        /FAIL breaking and dangerous changes against commit [0-9a-f]{12} \(1 failing, 0 passing\)\n {2}failing \(1\):\n {4}BREAKING FIELD_REMOVED Query.myOrders: Field 'myOrders' was removed from object type 'Query'\n {6}no usage data/,
      );
      expect(broken.lines.join('\n')).toMatch(
        /FAIL generated types are up to date\n {2}subgraphs\/order\/generated\/resolvers-types.ts is stale or missing\n {2}Run `npm run schema:codegen`/,
      );

      await writeGenerated(dir, withoutMyOrders());

      fs.writeFileSync(
        path.join(dir, ACKNOWLEDGED_FILE),
        JSON.stringify([{ type: 'FIELD_REMOVED', path: 'Query.myOrders', reason: 'unused by the admin UI', expires: '2099-12-31' }]),
      );
      git(dir, 'add', '.');
      git(dir, 'commit', '-q', '-m', 'drop myOrders');
      // As on a fresh clone of main: the base is the version before the last change.
      const acknowledged = await runSchemaChecks(dir, { subgraphs: withoutMyOrders(), now: new Date('2099-10-01T00:00:00Z') });
      expect(acknowledged.lines.join('\n')).toMatch(/BREAKING FIELD_REMOVED Query.myOrders: .*\n {6}acknowledged until 2099-12-31: unused by the admin UI/);
      expect(acknowledged.ok).toBe(true);

      const againstFirst = await runSchemaChecks(dir, { subgraphs: withoutMyOrders(), baseRef: 'HEAD~1', now: new Date('2099-10-01T00:00:00Z') });
      expect(againstFirst.ok).toBe(true);
      await expect(runSchemaChecks(dir, { subgraphs: withoutMyOrders(), baseRef: 'no-such-branch' })).rejects.toThrow(/SCHEMA_BASE_REF no-such-branch is not a commit/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    // Six whole checks, each loading the gateway and generating the types: beside the browser tests on two cores, over 30 s.
  }, 60_000);

  it('fails on a stale committed supergraph', () => {
    const dir = tempRoot();
    try {
      fs.mkdirSync(path.join(dir, 'schema'));
      writeComposition(dir, composed(real()));
      fs.appendFileSync(path.join(dir, SUPERGRAPH_FILE), '\nscalar Leftover\n');
      expect(stalenessProblems(dir, composed(real()))).toEqual([
        'schema/supergraph.graphql is stale: it differs from what the subgraphs compose to',
        'Run `npm run schema:compose` and commit the result.',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('admin UI operations', () => {
  it("reports an operation that no longer validates or is over the gateway's limits (the supergraph's @listSize included), naming its file", () => {
    const dir = tempRoot();
    try {
      const ops = path.join(dir, 'gateway', 'admin', 'operations', 'orders');
      fs.mkdirSync(ops, { recursive: true });
      fs.writeFileSync(path.join(ops, 'ok.graphql'), 'query RecentOrders($limit: Int) { orders(limit: $limit) { orderId totalAmount user { email } } }');
      fs.writeFileSync(path.join(ops, 'stale.graphql'), 'query Stale { orders { orderId shippingAddress } }');
      fs.writeFileSync(
        path.join(ops, 'huge.graphql'),
        `query Huge { ${Array.from({ length: 15 }, (_, i) => `o${i}: orders(limit: 400) { orderId status totalAmount user { email } }`).join(' ')} }`,
      );
      fs.writeFileSync(path.join(dir, 'gateway', 'admin', 'operations', 'broken.graphql'), 'query {');

      const { supergraphSdl } = composed(real());
      const result = operationProblems(dir, apiSchemaOf(supergraphSdl), OPERATIONS_DIR, costDirectivesOf(parse(supergraphSdl)));
      expect(result.files).toBe(4);
      expect(result.problems).toEqual([
        expect.stringMatching(/^gateway\/admin\/operations\/broken\.graphql: Syntax Error/),
        expect.stringMatching(/^gateway\/admin\/operations\/orders\/huge\.graphql: Huge: Query is too complex/),
        'gateway/admin/operations/orders/stale.graphql: Cannot query field "shippingAddress" on type "Order".',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('validates each operation with the shared fragments it spreads, and reports a fragment no operation spreads', () => {
    const dir = tempRoot();
    try {
      const ops = path.join(dir, 'gateway', 'admin', 'operations');
      fs.mkdirSync(ops, { recursive: true });
      fs.writeFileSync(
        path.join(ops, 'fragments.graphql'),
        'fragment OrderLine on Order { orderId ...Money } fragment Money on Order { totalAmount } fragment Stale on Order { shippingAddress } fragment Spare on Order { status }',
      );
      fs.writeFileSync(path.join(ops, 'orders.graphql'), 'query Orders { orders { ...OrderLine } }');
      fs.writeFileSync(path.join(ops, 'stale.graphql'), 'query Stale { orders { ...Stale } }');
      fs.writeFileSync(path.join(ops, 'unknown.graphql'), 'query Unknown { orders { ...Missing } }');

      const result = operationProblems(dir, apiSchemaOf(composed(real()).supergraphSdl));
      expect(result.problems).toEqual([
        'gateway/admin/operations/stale.graphql: Cannot query field "shippingAddress" on type "Order".',
        'gateway/admin/operations/unknown.graphql: Unknown fragment "Missing".',
        'gateway/admin/operations/fragments.graphql: fragment Spare is spread by no operation',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('list sizes', () => {
  const sizing = (subgraphs: SubgraphSdl[]) => {
    const { supergraphSdl } = composed(subgraphs);
    return sizingProblems(apiSchemaOf(supergraphSdl), costDirectivesOf(parse(supergraphSdl)));
  };

  it('finds every list a client sizes under @listSize, its slicing arguments with defaults', () => {
    expect(sizing(real())).toEqual([]);
  });

  it('reports a list sized by an argument @listSize does not name, and a slicing argument without a default', () => {
    const unsized = edited('book', (sdl) => sdl.replace(/(searchBooks\(q: String!, limit: Int = 20, offset: Int = 0\): BookSearchPage!)\s*@listSize\([^)]*\)/, '$1'));
    expect(sizing(unsized)).toEqual(['Query.searchBooks(limit) sizes a list: give the field @listSize(slicingArguments: ["limit"]) (and sizedFields for a page object)']);
    const undefaulted = edited('order', (sdl) => sdl.replace('orders(status: OrderStatus, limit: Int = 50,', 'orders(status: OrderStatus, limit: Int,'));
    expect(sizing(undefaulted)).toEqual(['Query.orders(limit) is a slicing argument without a default value']);
  });
});

describe('generated types', () => {
  it('are committed as the subgraphs and the admin UI operations generate them now', async () => {
    const files = await generatedFiles(committedSources(root));
    expect(files.map(({ file }) => file).sort()).toEqual([ADMIN_DOCUMENTS_FILE, PERSISTED_DOCUMENTS_FILE, ...real().map((subgraph) => resolverTypesFile(subgraph.name))].sort());
    expect(generatedStaleness(root, files)).toEqual([]);
  });

  it("name a subgraph's resolver types that its schema change leaves stale", async () => {
    const files = await generatedFiles({ root, subgraphs: withoutMyOrders(), supergraphSdl: composed(withoutMyOrders()).supergraphSdl });
    expect(generatedStaleness(root, files)).toEqual(['subgraphs/order/generated/resolvers-types.ts is stale or missing', 'Run `npm run schema:codegen` and commit the result.']);
  });

  it('fail, naming the file and the scalar, on a custom scalar the generator has no TypeScript type for', async () => {
    const subgraphs = edited('book', (sdl) => sdl.replace('scalar Money\n', 'scalar Money\nscalar Isbn\n').replace('  isbn: String!\n', '  isbn: Isbn!\n'));
    const result = await generatedTypesProblems(root, composed(subgraphs));
    expect(result.problems).toEqual([
      'GraphQL Code Generator failed: subgraphs/book/generated/resolvers-types.ts: Unknown scalar type Isbn. Please override it using the "scalars" configuration field!',
    ]);
  });

  it("name the admin UI's typed documents and their trusted documents manifest when an operation changes, and the ones missing", async () => {
    const dir = tempRoot();
    try {
      await writeGenerated(dir, real());
      const operation = path.join(dir, 'gateway', 'admin', 'operations', 'fragments.graphql');
      const source = fs.readFileSync(operation, 'utf8');
      expect(source).toContain('fragment OrderSummary on Order {');
      fs.writeFileSync(operation, source.replace('  status\n  allowedNextStatuses\n', '  status\n  refundStatus\n  allowedNextStatuses\n'));
      fs.rmSync(path.join(dir, resolverTypesFile('auth')));

      const files = await generatedFiles({ root: dir, subgraphs: real(), supergraphSdl: composed(real()).supergraphSdl });
      expect(files.find(({ file }) => file === ADMIN_DOCUMENTS_FILE)?.content).toMatch(/status: OrderStatus, refundStatus: OrderRefundStatus \| null/);
      expect(generatedStaleness(dir, files)).toEqual([
        'subgraphs/auth/generated/resolvers-types.ts is stale or missing',
        `${ADMIN_DOCUMENTS_FILE} is stale or missing`,
        `${PERSISTED_DOCUMENTS_FILE} is stale or missing`,
        'Run `npm run schema:codegen` and commit the result.',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the trusted documents manifest', () => {
  it('reports a document the supergraph refuses, an id that is not its hash, and a document over the budget', () => {
    const { supergraphSdl } = composed(real());
    const body = (text: string) => ({ id: documentId(text), type: 'query' as const, body: text });
    const huge = `query Huge { ${Array.from({ length: 6 }, (_, i) => `o${i}: orders(limit: 2000) { orderId }`).join(' ')} }`;
    const problems = manifestProblems(
      {
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [
          { name: 'Fine', ...body('query Fine { books(limit: 2) { id } }') },
          { name: 'Stale', ...body('query Stale { orders { shippingAddress } }') },
          { name: 'Forged', ...body('query Forged { books { id } }'), id: 'f'.repeat(64) },
          { name: 'Huge', ...body(huge) },
        ],
      },
      apiSchemaOf(supergraphSdl),
      costDirectivesOf(parse(supergraphSdl)),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^Stale \(\w+\): Cannot query field "shippingAddress" on type "Order"\.$/),
      `Forged (${'f'.repeat(64)}): the id is not the sha256 of the body`,
      expect.stringMatching(/^Huge \(\w+\): Query is too complex: estimated cost 12000 exceeds the limit of 10000$/),
    ]);
  });
});
