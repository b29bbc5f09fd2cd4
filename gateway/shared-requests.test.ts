/**
 * Identical GraphQL requests in flight at the gateway share one execution (gateway/shared-requests.ts),
 * seen by a client and by the subgraph: the gateway in front of stand-in subgraphs that hold their
 * answers until the test lets them go, with the subgraph fetcher's own sharing off so that every
 * execution shows as a subgraph call. Tracing is on, its spans kept in memory.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind } from '@opentelemetry/api';
import { loadConfig, type Config } from '../platform/config';
import { createLogger } from '../platform/logger';
import { traceInMemory } from '../test/telemetry';
import { waitFor } from '../test/wait';
import { createGraphqlGateway } from './graphql';
import { createGateway, type GatewayRuntime } from './index';

const logger = createLogger('silent');
const { exporter, tracing } = traceInMemory();
afterAll(() => tracing?.shutdown());
const DASHBOARD = '{ dashboard { totalOrders } }';
const END_SESSIONS = 'mutation { endUserSessions(userId: "u-1") }';

/** A subgraph that records each call and answers only once `release` is called. */
function heldSubgraph() {
  const calls: { authorization?: string; query: string }[] = [];
  let held: (() => void)[] | undefined = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const { query } = JSON.parse(Buffer.concat(chunks).toString()) as { query: string };
      calls.push({ authorization: req.headers.authorization, query });
      const data = query.includes('endUserSessions') ? { endUserSessions: 1 } : { dashboard: { totalOrders: 7 } };
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
      if (held) held.push(answer);
      else answer();
    });
  });
  return {
    calls,
    async start(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    release() {
      for (const answer of held ?? []) answer();
      held = undefined;
    },
    hold() {
      held = [];
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('identical GraphQL requests in flight at the gateway', () => {
  const subgraph = heldSubgraph();
  let gateway: GatewayRuntime;
  let url: string;

  async function started(env: Record<string, string>): Promise<void> {
    const subgraphUrl = await subgraph.start();
    // The stand-in answers as the analytics subgraph only: no usage reports go to it (it keeps no registry).
    const config: Config = {
      ...loadConfig({ INTERNAL_API_KEY: 'k', ANALYTICS_URL: subgraphUrl, AUTH_URL: subgraphUrl, GATEWAY_DEDUPLICATE_QUERIES: 'false', USAGE_REPORTING: 'false', ...env }),
    };
    gateway = await createGateway({
      config,
      logger,
      healthChecks: [],
      mountGraphql: async (app, registry) => {
        const graphql = createGraphqlGateway({ config, logger, registry });
        await graphql.mount(app);
        return { stop: () => graphql.stop(), front: graphql.front };
      },
    });
    url = `http://127.0.0.1:${await gateway.start(0, '127.0.0.1')}`;
  }

  const post = (query: string, authorization = 'Bearer a', extra: Record<string, string> = {}) =>
    fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization, ...extra }, body: JSON.stringify({ query }) });

  const sharedSoFar = async () => {
    const text = await (await fetch(`${url}/actuator/prometheus`)).text();
    return Number(/^gateway_graphql_shared_requests_total\{[^}]*\} (\d+)$/m.exec(text)?.[1]);
  };

  afterEach(async () => {
    subgraph.release();
    await gateway?.stop();
    await subgraph.stop();
    subgraph.calls.length = 0;
    subgraph.hold();
  });

  it('answers eight identical queries sent at once with one execution, each under its own request id', async () => {
    await started({});
    const answers = Array.from({ length: 8 }, () => post(DASHBOARD));
    await waitFor(async () => (await sharedSoFar()) === 7 && subgraph.calls.length === 1, { what: 'seven requests waiting on the first one' });
    subgraph.release();
    const results = await Promise.all(answers);
    for (const res of results) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
      expect(await res.json()).toEqual({ data: { dashboard: { totalOrders: 7 } } });
    }
    expect(new Set(results.map((res) => res.headers.get('x-request-id'))).size).toBe(8);
    expect(subgraph.calls).toEqual([{ authorization: 'Bearer a', query: '{dashboard{totalOrders}}' }]);
  });

  it('runs each mutation, and each query of another caller or asking for another media type, on its own', async () => {
    await started({});
    const answers = [
      post(END_SESSIONS),
      post(END_SESSIONS),
      post(DASHBOARD, 'Bearer a'),
      post(DASHBOARD, 'Bearer b'),
      post(DASHBOARD, 'Bearer a', { accept: 'application/graphql-response+json' }),
    ];
    await waitFor(() => subgraph.calls.length === 5, { what: 'five subgraph calls' });
    subgraph.release();
    const results = await Promise.all(answers);
    expect(results.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await sharedSoFar()).toBe(0);
    expect(subgraph.calls.map((call) => call.authorization).sort()).toEqual(['Bearer a', 'Bearer a', 'Bearer a', 'Bearer a', 'Bearer b']);
    expect(results[4].headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
  });

  it('runs every request on its own when GATEWAY_DEDUPLICATE_REQUESTS is false', async () => {
    await started({ GATEWAY_DEDUPLICATE_REQUESTS: 'false' });
    const answers = Array.from({ length: 4 }, () => post(DASHBOARD));
    await waitFor(() => subgraph.calls.length === 4, { what: 'four subgraph calls' });
    subgraph.release();
    for (const res of await Promise.all(answers)) expect(await res.json()).toEqual({ data: { dashboard: { totalOrders: 7 } } });
    expect(await sharedSoFar()).toBe(0);
  });

  it('marks the span of a request that shared, and links it and the span of the request that ran to each other', async () => {
    await started({});
    exporter.reset();
    const answers = [post(DASHBOARD), post(DASHBOARD)];
    await waitFor(async () => (await sharedSoFar()) === 1 && subgraph.calls.length === 1, { what: 'the second request waiting on the first' });
    subgraph.release();
    await Promise.all(answers);
    const served = await waitFor(
      () => {
        const spans = exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER && span.name === 'POST /graphql');
        return spans.length === 2 ? spans : undefined;
      },
      { what: "both requests' spans" },
    );
    const [shared, ran] = served[0].attributes['bookstore.deduplicated'] === true ? served : [served[1], served[0]];
    expect(shared.attributes['bookstore.deduplicated']).toBe(true);
    expect(ran.attributes['bookstore.deduplicated']).toBeUndefined();
    expect(shared.links.map((link) => link.context.spanId)).toEqual([ran.spanContext().spanId]);
    expect(ran.links.map((link) => link.context.spanId)).toEqual([shared.spanContext().spanId]);
  });

  it('runs a query again once the answer of an identical one has gone out', async () => {
    await started({});
    subgraph.release();
    for (let i = 0; i < 3; i += 1) expect(await (await post(DASHBOARD)).json()).toEqual({ data: { dashboard: { totalOrders: 7 } } });
    expect(subgraph.calls).toHaveLength(3);
    expect(await sharedSoFar()).toBe(0);
  });
});
