/**
 * The schema registry (CONTRACT §13) over real services and a real gateway, on SQLite or MySQL as the
 * run gives: what the gateway runs shows up in the store with its coordinates, client and hour; the
 * schema a gateway starts on and the one published are versions; the admin reads both by REST and
 * GraphQL; usage past the retention goes; and a store that is down costs counts, never a request.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import request from 'supertest';
import { graphqlHalf } from '../../../gateway/graphql';
import { INTERNAL_KEY_HEADER } from '../../../platform/auth';
import { usageHourOf } from '../../../platform/contracts/schema-registry';
import { createLogger } from '../../../platform/logger';
import { publishSchema } from '../../../schema/publish';
import { composeSubgraphs, projectRoot, readSubgraphs } from '../../../schema/compose';
import { closedPort, startGateway, type RunningGateway } from '../../../test/gateway';
import { graphql } from '../../../test/graphql';
import { adminSession, expectEnvelope, INTERNAL_KEY, registeredUser, startStack, waitFor, type Stack } from '../../../test/harness';
import type { RegistryService } from './service';

jest.setTimeout(90_000);

const BOOKS = 'query ShopBooks($limit: Int) { books(limit: $limit) { id title } }';
const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');

let stack: Stack;
let gateway: RunningGateway;
let admin: { bearer: string };
let registry: RegistryService;

const mountGraphql = (config: Stack['config']) => graphqlHalf({ config, logger: createLogger(config.logLevel) });

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'analytics'], env: { USAGE_REPORT_INTERVAL_MS: '100', SEED_DEMO_CATALOGUE: 'true' } });
  gateway = await startGateway(stack.config, { mountGraphql: mountGraphql(stack.config) });
  admin = await adminSession(stack);
  registry = (stack.services.analytics as unknown as { registry: RegistryService }).registry;
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
  await stack?.stop();
});

const exportOf = async (days = 1) => {
  const res = await request(gateway.url).get(`/analytics/schema/usage-export?days=${days}`).set('Authorization', admin.bearer);
  expect(res.status).toBe(200);
  return res.body as {
    since: string;
    until: string;
    operations: { hash: string; name: string; type: string; coordinates: string[] }[];
    counts: { hour: string; hash: string; name: string; client: string; version: string; count: number }[];
  };
};

describe('usage recorded from the gateway', () => {
  it('keeps each operation the gateway runs with its coordinates, its client and version, and its hour', async () => {
    const before = usageHourOf(Date.now());
    const send = (headers: Record<string, string>) => graphql(gateway.url, BOOKS, { variables: { limit: 2 }, headers });
    const answers = await Promise.all([
      send({ 'apollographql-client-name': 'shop-web', 'apollographql-client-version': '2.1.0' }),
      send({ 'apollographql-client-name': 'shop-web', 'apollographql-client-version': '2.1.0' }),
      send({ 'graphql-client-name': 'shop-ios', 'graphql-client-version': '5.0' }),
      send({}),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.body.data.books).toHaveLength(2);
    }

    const hash = hashOf(BOOKS);
    const usage = await waitFor(
      async () => {
        const body = await exportOf();
        const counts = body.counts.filter((c) => c.hash === hash);
        return counts.reduce((sum, c) => sum + c.count, 0) === 4 ? body : undefined;
      },
      { what: 'the four requests in the store' },
    );
    const counts = usage.counts.filter((c) => c.hash === hash).map(({ client, version, count, name, hour }) => ({ client, version, count, name, hour }));
    const hours = new Set([before, usageHourOf(Date.now())]);
    expect(counts.every((c) => hours.has(c.hour))).toBe(true);
    expect(counts.map(({ hour: _hour, ...rest }) => rest).sort((a, b) => a.client.localeCompare(b.client))).toEqual([
      { client: 'shop-ios', version: '5.0', count: 1, name: 'ShopBooks' },
      { client: 'shop-web', version: '2.1.0', count: 2, name: 'ShopBooks' },
      { client: 'unknown', version: 'unknown', count: 1, name: 'ShopBooks' },
    ]);
    expect(usage.operations.find((op) => op.hash === hash)).toEqual({
      hash,
      name: 'ShopBooks',
      type: 'query',
      coordinates: ['Book', 'Book.id', 'Book.title', 'ID', 'Int', 'Query', 'Query.books', 'Query.books.limit', 'String'],
    });
  });

  it('answers each coordinate of the schema with its requests and clients, deprecated ones in use first, by REST and GraphQL alike (ADMIN)', async () => {
    await waitFor(async () => (await exportOf()).counts.some((c) => c.hash === hashOf(BOOKS)), { what: 'usage of the books query' });
    const rest = await request(gateway.url).get('/analytics/schema/usage?days=7&limit=1000').set('Authorization', admin.bearer);
    expect(rest.status).toBe(200);
    const books = rest.body.fields.find((f: { coordinate: string }) => f.coordinate === 'Query.books');
    expect(books).toMatchObject({ kind: 'FIELD', deprecated: false, deprecationReason: null });
    expect(books.requests).toBeGreaterThanOrEqual(4);
    expect(books.clients.map((c: { name: string }) => c.name)).toEqual(expect.arrayContaining(['shop-web', 'shop-ios', 'unknown']));
    expect(rest.body.fields.find((f: { coordinate: string }) => f.coordinate === 'Query.dashboard')).toMatchObject({ requests: 0, clients: [], lastUsedAt: null });
    expect(rest.body.totalFields).toBe(rest.body.fields.length);
    expect(rest.body.version.servedAt).not.toBeNull();

    const gql = await graphql(gateway.url, '{ schemaUsage(days: 7) { days totalFields fields(limit: 1000) { coordinate kind requests clients { name version requests } } } }', {
      bearer: admin.bearer,
    });
    expect(gql.status).toBe(200);
    expect(gql.body.data.schemaUsage.totalFields).toBe(rest.body.totalFields);
    const viaGraphql = gql.body.data.schemaUsage.fields.find((f: { coordinate: string }) => f.coordinate === 'Query.books');
    expect(viaGraphql.requests).toBeGreaterThanOrEqual(books.requests);

    const buyer = await registeredUser(stack);
    expectEnvelope(await request(gateway.url).get('/analytics/schema/usage').set('Authorization', buyer.bearer), 403, 'Admin role is required to access analytics');
    expectEnvelope(await request(gateway.url).get('/analytics/schema/usage'), 401);
    const denied = await graphql(gateway.url, '{ schemaVersions { id } }', { bearer: buyer.bearer });
    expect(denied.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expectEnvelope(await request(gateway.url).get('/analytics/schema/usage?days=91').set('Authorization', admin.bearer), 400);
  });
});

describe('schema versions', () => {
  it('records the schema a gateway starts on, and a publish of the same supergraph stamps that version with its commit and author', async () => {
    const served = await waitFor(
      async () => {
        const res = await request(gateway.url).get('/analytics/schema/versions').set('Authorization', admin.bearer);
        return res.body.length > 0 ? res.body : undefined;
      },
      { what: 'the gateway to record its schema' },
    );
    expect(served[0]).toMatchObject({ commit: null, publishedAt: null, subgraphs: ['analytics', 'auth', 'book', 'order', 'payment', 'user'] });
    expect(served[0].publishedBy).toMatch(/^gateway@/);

    const settings = { registry: { url: stack.urls.analytics, internalApiKey: INTERNAL_KEY, token: undefined }, publishedBy: 'ci@bookstore.test', commit: 'a'.repeat(40) };
    const published = await publishSchema(projectRoot(), settings);
    expect(published.created).toBe(false);
    expect(published.version).toMatchObject({ id: served[0].id, commit: 'a'.repeat(40), publishedBy: 'ci@bookstore.test' });
    expect(published.version.publishedAt).not.toBeNull();

    const detail = await request(gateway.url).get(`/analytics/schema/versions/${served[0].id}`).set('Authorization', admin.bearer);
    expect(detail.status).toBe(200);
    const composed = composeSubgraphs(readSubgraphs(projectRoot()));
    if (!composed.ok) throw new Error('the subgraphs do not compose');
    // The published SDLs, as written, replace what the gateway extracted from the supergraph.
    expect(detail.body.subgraphSdls.find((s: { name: string }) => s.name === 'book').sdl).toBe(composed.subgraphs.find((s) => s.name === 'book')?.sdl);
    expect(detail.body.supergraphSdl).toBe(composed.supergraphSdl);
  });

  it('makes a new supergraph a new version, newest first, while production still runs the served one', async () => {
    const other = readSubgraphs(projectRoot()).map((s) =>
      s.name === 'book' ? { ...s, sdl: s.sdl.replace('  isbn: String!\n', '  isbn: String! @deprecated(reason: "Use identifiers")\n') } : s,
    );
    const composed = composeSubgraphs(other);
    if (!composed.ok) throw new Error(composed.errors.join('\n'));
    const res = await request(stack.urls.analytics)
      .post('/analytics/internal/schema/versions')
      .set(INTERNAL_KEY_HEADER, INTERNAL_KEY)
      .send({
        source: 'publish',
        supergraphSdl: composed.supergraphSdl,
        subgraphs: composed.subgraphs.map(({ name, url, sdl }) => ({ name, url, sdl })),
        commit: 'b'.repeat(40),
        publishedBy: 'dev',
      });
    expect(res.status).toBe(201);
    const list = await request(gateway.url).get('/analytics/schema/versions?limit=5').set('Authorization', admin.bearer);
    expect(list.body[0].id).toBe(res.body.id);
    const servedNow = await request(gateway.url).get('/analytics/schema/versions/served').set('Authorization', admin.bearer);
    expect(servedNow.body.id).not.toBe(res.body.id);
    expect(servedNow.body.servedAt).not.toBeNull();

    // The usage page lists the latest version's coordinates: its deprecated field in use comes first.
    await graphql(gateway.url, '{ books(limit: 1) { isbn } }', { headers: { 'apollographql-client-name': 'legacy-app', 'apollographql-client-version': '1.0' } });
    const top = await waitFor(
      async () => {
        const usage = await request(gateway.url).get('/analytics/schema/usage?limit=1').set('Authorization', admin.bearer);
        return usage.body.fields[0]?.deprecated && usage.body.fields[0].requests > 0 ? usage.body : undefined;
      },
      { what: 'the deprecated field on top' },
    );
    expect(top.version.id).toBe(res.body.id);
    expect(top.fields[0]).toMatchObject({ coordinate: 'Book.isbn', deprecated: true, deprecationReason: 'Use identifiers' });
    expect(top.fields[0].clients).toEqual(expect.arrayContaining([{ name: 'legacy-app', version: '1.0', requests: 1 }]));
  });
});

describe('the internal routes', () => {
  const report = (hour: string) => ({
    operations: [{ hash: 'c'.repeat(64), name: 'Old', type: 'query', coordinates: ['Query.books', 'Query'] }],
    counts: [{ hour, hash: 'c'.repeat(64), name: 'Old', client: 'batch', version: '1', count: 3 }],
  });

  it('takes reports with the internal key only, and only from inside: the gateway does not route them', async () => {
    expectEnvelope(
      await request(stack.urls.analytics)
        .post('/analytics/internal/usage')
        .send(report(usageHourOf(Date.now()))),
      401,
      'A valid internal API key is required',
    );
    expectEnvelope(
      await request(gateway.url)
        .post('/analytics/internal/usage')
        .set(INTERNAL_KEY_HEADER, INTERNAL_KEY)
        .send(report(usageHourOf(Date.now()))),
      404,
    );
    const bad = await request(stack.urls.analytics)
      .post('/analytics/internal/usage')
      .set(INTERNAL_KEY_HEADER, INTERNAL_KEY)
      .send({ operations: [], counts: [{ hour: '2026-11-27T15:30:00Z', hash: 'x', name: 'A', client: 'c', version: 'v', count: 0 }] });
    expectEnvelope(bad, 400);
    expect(bad.body.validationErrors).toEqual(
      expect.arrayContaining([
        'counts[0].hash: must be a sha256 hex digest',
        'counts[0].hour: must be an hour as yyyy-MM-ddTHH:00:00Z',
        'counts[0].count: must not be less than 1',
      ]),
    );
    const undescribed = await request(stack.urls.analytics)
      .post('/analytics/internal/usage')
      .set(INTERNAL_KEY_HEADER, INTERNAL_KEY)
      .send({ operations: [], counts: report(usageHourOf(Date.now())).counts });
    expectEnvelope(undescribed, 400);
    expect(undescribed.body.validationErrors).toEqual(['counts[0]: names an operation the report does not describe']);
  });

  it('keeps usage for the retention only: older hours are left out when reported and deleted when they age', async () => {
    const day = 86_400_000;
    const tooOld = usageHourOf(Date.now() - 31 * day);
    const res = await request(stack.urls.analytics).post('/analytics/internal/usage').set(INTERNAL_KEY_HEADER, INTERNAL_KEY).send(report(tooOld));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ counts: 0 });

    const aging = usageHourOf(Date.now() - 29 * day);
    expect((await request(stack.urls.analytics).post('/analytics/internal/usage').set(INTERNAL_KEY_HEADER, INTERNAL_KEY).send(report(aging))).body).toEqual({ counts: 1 });
    expect((await exportOf(30)).counts.filter((c) => c.hash === 'c'.repeat(64))).toEqual([
      { hour: aging, hash: 'c'.repeat(64), name: 'Old', client: 'batch', version: '1', count: 3 },
    ]);

    // Two days on, that hour is past the 30 days kept: pruning deletes it, and the operation no usage names any more.
    expect(await registry.usage.prune(Date.now() + 2 * day)).toBeGreaterThanOrEqual(1);
    const after = await exportOf(30);
    expect(after.counts.filter((c) => c.hash === 'c'.repeat(64))).toEqual([]);
    expect(after.operations.filter((op) => op.hash === 'c'.repeat(64))).toEqual([]);
  });
});

/** A TCP forwarder to the analytics service that can be cut and restored: the store's outage, as the gateway sees it. */
async function cuttableLink(port: number, target: string) {
  const { hostname, port: targetPort } = new URL(target);
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  return {
    async up() {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(targetPort), hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => socket.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      await new Promise<void>((resolve) => server?.listen(port, '127.0.0.1', resolve));
    },
    async down() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
      server = undefined;
    },
  };
}

describe('a store that is down', () => {
  it('never fails a request; the counts wait, within their bound, and arrive once the store is back', async () => {
    const port = await closedPort();
    const link = await cuttableLink(port, stack.urls.analytics);
    // The store (and only it) behind the link; two counters at most, so a third client's count is dropped.
    const config = { ...stack.config, urls: { ...stack.config.urls, analytics: `http://127.0.0.1:${port}` }, usage: { ...stack.config.usage, maxPending: 2 } };
    const cut = await startGateway(config, { mountGraphql: mountGraphql(config) });
    try {
      const query = 'query OutageBooks { books(limit: 1) { id } }';
      const ask = (name: string) => graphql(cut.url, query, { headers: { 'apollographql-client-name': name } }).timeout(5000);
      // Two alike at once (the second may share the first's answer, and counts all the same), then one client after the other.
      const answers = [...(await Promise.all([ask('outage-a'), ask('outage-a')])), await ask('outage-b'), await ask('outage-c')];
      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(res.body.data.books).toHaveLength(1);
      }
      const metric = async (line: RegExp) => {
        const text = (await request(cut.url).get('/actuator/prometheus')).text;
        return Number(line.exec(text)?.[1] ?? 0);
      };
      await waitFor(async () => (await metric(/^gateway_usage_reports_total\{outcome="failed"[^}]*\} (\d+)/m)) >= 1, { what: 'a report the store could not take' });
      expect(await metric(/^gateway_usage_dropped_total\{[^}]*\} (\d+)/m)).toBe(1);

      await link.up();
      const hash = hashOf(query);
      const arrived = await waitFor(
        async () => {
          const counts = (await exportOf()).counts.filter((c) => c.hash === hash);
          return counts.reduce((sum, c) => sum + c.count, 0) === 3 ? counts : undefined;
        },
        { what: 'the kept counts in the store' },
      );
      expect(arrived.map((c) => [c.client, c.count]).sort()).toEqual([
        ['outage-a', 2],
        ['outage-b', 1],
      ]);
    } finally {
      await cut.stop();
      await link.down();
    }
  });
});
