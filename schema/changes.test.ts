/**
 * Usage-aware schema checks (CONTRACT §13): a breaking change judged by what clients used within the
 * window, by the documents the system itself sends, by acknowledgements and their expiry, and the rule
 * for a check without usage data; from an export file and from a running registry.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { graphqlHalf } from '../gateway/graphql';
import { usageHourOf, type UsageExportDto } from '../platform/contracts/schema-registry';
import { createLogger } from '../platform/logger';
import { startGateway } from '../test/gateway';
import { graphql } from '../test/graphql';
import { INTERNAL_KEY, startStack, waitFor } from '../test/harness';
import { judgeChanges, schemaChanges, type Acknowledgement, type JudgementContext } from './changes';
import { NO_REGISTRY, protectedDocuments } from './check';
import { apiSchemaOf, composeSubgraphs, projectRoot, readSubgraphs, type SubgraphSdl } from './compose';
import { loadUsage } from './registry-client';

jest.setTimeout(90_000);

const root = projectRoot();
const NOW = new Date('2026-11-27T12:30:00Z');
const DAY = 86_400_000;

function supergraph(subgraphs: SubgraphSdl[]): string {
  const composition = composeSubgraphs(subgraphs);
  if (!composition.ok) throw new Error(composition.errors.join('\n'));
  return composition.supergraphSdl;
}
const edited = (name: string, edit: (sdl: string) => string) => readSubgraphs(root).map((s) => (s.name === name ? { ...s, sdl: edit(s.sdl) } : s));
const current = supergraph(readSubgraphs(root));
const withoutMyOrders = supergraph(edited('order', (sdl) => sdl.replace(/\s*"The caller's orders, newest first."\s*myOrders: \[Order!\]!/, '')));
const withoutDashboard = supergraph(edited('analytics', (sdl) => sdl.replace(/\s*"All-time figures[^"]*"\s*dashboard: Dashboard!\n/, '\n')));

const MY_ORDERS = 'query MyOrders { myOrders { orderId status } }';
const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');

/** An export holding `MyOrders` run by the shop's web client `hoursAgo` before NOW. */
function usageOf(hoursAgo: number, client = 'shop-web'): UsageExportDto {
  const hash = hashOf(MY_ORDERS);
  return {
    since: usageHourOf(NOW.getTime() - 30 * DAY),
    until: usageHourOf(NOW.getTime() + 3600_000),
    operations: [
      { hash, name: 'MyOrders', type: 'query', coordinates: ['Order', 'Order.orderId', 'Order.status', 'OrderStatus', 'Query', 'Query.myOrders'] },
      { hash: 'b'.repeat(64), name: 'Books', type: 'query', coordinates: ['Book', 'Book.id', 'Query', 'Query.books'] },
    ],
    counts: [
      { hour: usageHourOf(NOW.getTime() - hoursAgo * 3600_000), hash, name: 'MyOrders', client, version: '2.1.0', count: 40 },
      { hour: usageHourOf(NOW.getTime() - hoursAgo * 3600_000), hash, name: 'MyOrders', client: 'shop-ios', version: '5.0', count: 2 },
      { hour: usageHourOf(NOW.getTime() - 3600_000), hash: 'b'.repeat(64), name: 'Books', client, version: '2.1.0', count: 7 },
    ],
  };
}

function context(overrides: Partial<JudgementContext> = {}): JudgementContext {
  return {
    usage: usageOf(24),
    noUsageReason: '',
    windowDays: 7,
    threshold: 1,
    excludedClients: [],
    allowNoUsage: false,
    acknowledgements: [],
    protectedDocuments: protectedDocuments(root, apiSchemaOf(current)),
    now: NOW,
    ...overrides,
  };
}

const ack = (overrides: Partial<Acknowledgement> = {}): Acknowledgement => ({
  type: 'FIELD_REMOVED',
  path: 'Query.myOrders',
  reason: 'the shop reads orders by REST',
  expires: '2026-12-31',
  ...overrides,
});

describe('a breaking change judged by usage', () => {
  it('fails a removed field a client used within the window, naming the operation and the clients with their counts', async () => {
    const [judged] = judgeChanges(await schemaChanges(current, withoutMyOrders), context());
    expect(judged).toMatchObject({ type: 'FIELD_REMOVED', path: 'Query.myOrders', criticality: 'BREAKING', verdict: 'fail' });
    expect(judged.reason).toBe(`used in the last 7 days: 42 requests by 1 operation: MyOrders (${hashOf(MY_ORDERS).slice(0, 12)}) from shop-web 2.1.0 ×40, shop-ios 5.0 ×2`);
    expect(judged.usage?.operations).toEqual([
      {
        name: 'MyOrders',
        hash: hashOf(MY_ORDERS),
        requests: 42,
        clients: [
          { name: 'shop-web', version: '2.1.0', requests: 40 },
          { name: 'shop-ios', version: '5.0', requests: 2 },
        ],
      },
    ]);
  });

  it('passes the same removal once the usage is older than the window, with a note', async () => {
    const [judged] = judgeChanges(await schemaChanges(current, withoutMyOrders), context({ usage: usageOf(8 * 24) }));
    expect(judged).toMatchObject({ path: 'Query.myOrders', verdict: 'pass', reason: 'unused in the last 7 days' });
    // A window of 10 days still holds it.
    expect(judgeChanges(await schemaChanges(current, withoutMyOrders), context({ usage: usageOf(8 * 24), windowDays: 10 }))[0].verdict).toBe('fail');
  });

  it('leaves out excluded clients and passes usage below the threshold', async () => {
    const changes = await schemaChanges(current, withoutMyOrders);
    expect(judgeChanges(changes, context({ excludedClients: ['shop-web', 'shop-ios'] }))[0]).toMatchObject({ verdict: 'pass', reason: 'unused in the last 7 days' });
    expect(judgeChanges(changes, context({ excludedClients: ['shop-web'], threshold: 5 }))[0]).toMatchObject({
      verdict: 'pass',
      reason: 'used 2 times in the last 7 days, below the threshold of 5',
    });
  });

  it('always fails a breaking change to a field a trusted document (the admin UI) uses: unused, acknowledged or allowed alike', async () => {
    const changes = await schemaChanges(current, withoutDashboard);
    const removal = changes.find((change) => change.path === 'Query.dashboard');
    expect(removal).toBeDefined();
    const verdicts = [
      context({ usage: usageOf(24) }),
      context({ acknowledgements: [ack({ path: 'Query.dashboard' })] }),
      context({ usage: undefined, noUsageReason: 'none', allowNoUsage: true }),
    ].map((ctx) => judgeChanges([removal!], ctx)[0]);
    for (const judged of verdicts) {
      expect(judged.verdict).toBe('fail');
      expect(judged.protectedBy).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^trusted document Dashboard \([0-9a-f]{12}\)$/),
          'admin UI operation Dashboard (gateway/admin/operations/dashboard.graphql)',
        ]),
      );
    }
  });

  it('lets an acknowledged change pass until its expiry date, and no longer after it', async () => {
    const changes = await schemaChanges(current, withoutMyOrders);
    expect(judgeChanges(changes, context({ acknowledgements: [ack()] }))[0]).toMatchObject({
      verdict: 'pass',
      reason: 'acknowledged until 2026-12-31: the shop reads orders by REST',
    });
    const lapsed = judgeChanges(changes, context({ acknowledgements: [ack({ expires: '2026-11-26' })] }))[0];
    expect(lapsed.verdict).toBe('fail');
    expect(lapsed.reason).toMatch(/^used in the last 7 days \(its acknowledgement expired on 2026-11-26\): 42 requests/);
    expect(lapsed.acknowledgement).toMatchObject({ expired: true });
  });

  it('fails a breaking change without usage data unless told otherwise; a dangerous one passes with a note', async () => {
    const noUsage = { usage: undefined, noUsageReason: 'no usage source: set SCHEMA_REGISTRY_URL or SCHEMA_USAGE_FILE' };
    const [removed] = judgeChanges(await schemaChanges(current, withoutMyOrders), context(noUsage));
    expect(removed.verdict).toBe('fail');
    expect(removed.reason).toMatch(
      /^no usage data \(no usage source: set SCHEMA_REGISTRY_URL or SCHEMA_USAGE_FILE\): acknowledge it in schema\/acknowledged-breaking-changes.json/,
    );
    expect(judgeChanges(await schemaChanges(current, withoutMyOrders), context({ ...noUsage, allowNoUsage: true }))[0]).toMatchObject({
      verdict: 'pass',
      reason: 'no usage data (no usage source: set SCHEMA_REGISTRY_URL or SCHEMA_USAGE_FILE); allowed by SCHEMA_CHECK_ALLOW_NO_USAGE',
    });

    const withValue = supergraph(edited('order', (sdl) => sdl.replace(/enum OrderStatus \{\n/, 'enum OrderStatus {\n  ON_HOLD\n')));
    const added = judgeChanges(await schemaChanges(current, withValue), context(noUsage));
    expect(added).toEqual([expect.objectContaining({ type: 'ENUM_VALUE_ADDED', path: 'OrderStatus.ON_HOLD', criticality: 'DANGEROUS', verdict: 'pass' })]);
    // With usage, a value added concerns whoever reads the enum: MyOrders selects Order.status.
    expect(judgeChanges(await schemaChanges(current, withValue), context())[0]).toMatchObject({
      verdict: 'fail',
      reason: expect.stringMatching(/^used in the last 7 days: 42 requests/),
    });
  });
});

describe('the usage source', () => {
  it('reads an export file, and calls an empty one no usage data', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-export-'));
    try {
      fs.writeFileSync(path.join(dir, 'usage.json'), JSON.stringify(usageOf(1)));
      fs.writeFileSync(path.join(dir, 'empty.json'), JSON.stringify({ ...usageOf(1), operations: [], counts: [] }));
      const read = await loadUsage({ ...NO_REGISTRY, usageFile: path.join(dir, 'usage.json') }, root);
      expect(read.usage?.counts).toHaveLength(3);
      expect(await loadUsage({ ...NO_REGISTRY, usageFile: path.join(dir, 'empty.json') }, root)).toMatchObject({
        usage: undefined,
        noUsageReason: `the file ${path.join(dir, 'empty.json')} holds no operation`,
      });
      expect((await loadUsage(NO_REGISTRY, root)).noUsageReason).toBe('no usage source: set SCHEMA_REGISTRY_URL or SCHEMA_USAGE_FILE');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads a running system: a field a client asked for through the gateway fails its removal, naming the client', async () => {
    const stack = await startStack({ services: ['order', 'analytics'], env: { USAGE_REPORT_INTERVAL_MS: '100' } });
    const gateway = await startGateway(stack.config, { mountGraphql: graphqlHalf({ config: stack.config, logger: createLogger(stack.config.logLevel) }) });
    try {
      const admin = await request(stack.urls.auth).post('/auth/login').send({ email: stack.admin.email, password: stack.admin.password, deviceId: 'check' });
      const res = await graphql(gateway.url, MY_ORDERS, {
        bearer: `Bearer ${admin.body.accessToken}`,
        headers: { 'apollographql-client-name': 'shop-web', 'apollographql-client-version': '3.0.0' },
      });
      expect(res.status).toBe(200);
      const registry = { url: stack.urls.analytics, internalApiKey: INTERNAL_KEY, token: undefined };
      const usage = await waitFor(async () => (await loadUsage({ ...NO_REGISTRY, registry }, root)).usage, { what: 'the gateway to report its usage' });
      const [judged] = judgeChanges(await schemaChanges(current, withoutMyOrders), context({ usage, now: new Date() }));
      expect(judged.verdict).toBe('fail');
      expect(judged.reason).toMatch(/^used in the last 7 days: 1 request by 1 operation: MyOrders \([0-9a-f]{12}\) from shop-web 3\.0\.0 ×1$/);
      // Through the gateway with an ADMIN token instead of the internal key: the same export.
      const viaGateway = await loadUsage({ ...NO_REGISTRY, registry: { url: gateway.url, token: admin.body.accessToken, internalApiKey: undefined } }, root);
      expect(viaGateway.usage?.counts).toEqual(usage.counts);
    } finally {
      await gateway.stop();
      await stack.stop();
    }
  });
});
