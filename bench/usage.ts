/**
 * What recording field usage costs the gateway (CONTRACT §13): our gateways, one process each, over
 * the same services (bench/services.ts) and GraphQL paths as the gateway benchmark, with usage
 * recording off and on (`USAGE_REPORTING`), each with identical in-flight requests shared (the
 * default) and not (every request executed, so every one goes through the recording plugin). The
 * recording ones hand their counts to the analytics service of the services' process, as in
 * production; at the end, what the registry counted is read back and compared with what was sent.
 * They take turns in the same rounds, every answer checked against the data first (bench/gateway-paths.ts).
 *
 * `node dist/bench/usage.js [seconds=10]`. The aim (DESIGN.md): at most 3 % of the throughput.
 */
import 'reflect-metadata';
import os from 'node:os';
import type { UsageExportDto } from '../platform/contracts/schema-registry';
import { measure, type Row } from './gateway';
import { load } from './load';
import type { Target } from './gateway-paths';
import { ourGatewayVariants, withServices } from './peers';

const VARIANTS = [
  { target: 'off', reporting: false, deduplicate: true },
  { target: 'on', reporting: true, deduplicate: true },
  { target: 'off, no dedup', reporting: false, deduplicate: false },
  { target: 'on, no dedup', reporting: true, deduplicate: false },
] as const;

/** Each variant's requests carry a client name of their own, so the registry's count can be read per variant. */
const WARMUP_SECONDS = 2;

const clientOf = (target: string) => `bench-${target.replace(/[^a-z]+/g, '-')}`;

export function usageTable(result: Record<'dashboard' | 'books' | 'topBooks', Row[]>): string {
  const lines = ['| Path | usage recording | req/s | p50 ms | p99 ms | req/s vs off | CPU µs/request (gateway) | bad answers |', '|---|---|---|---|---|---|---|---|'];
  const labels = { dashboard: '`{ dashboard {…} }`', books: '`{ books(limit: 10) {…} }`', topBooks: 'top books → `Book` (2 subgraphs)' };
  for (const [name, rows] of Object.entries(result) as [keyof typeof labels, Row[]][]) {
    for (const row of rows) {
      const off = rows.find((other) => other.target === row.target.replace(/^on/, 'off'));
      const vs = off && off !== row ? `${(row.requestsPerSecond / off.requestsPerSecond).toFixed(3)}×` : '';
      lines.push(
        `| ${labels[name]} | ${row.target} | ${row.requestsPerSecond} | ${row.p50Ms} | ${row.p99Ms} | ${vs} | ${row.cpuUsPerRequest?.gateway ?? '–'} | ${row.non2xx + row.errors + row.mismatches} |`,
      );
    }
  }
  return lines.join('\n');
}

/** The requests the registry counted for each recording variant's client. */
async function registryCounts(analyticsUrl: string, authorization: string): Promise<Record<string, number>> {
  const res = await fetch(`${analyticsUrl}/analytics/schema/usage-export?days=1`, { headers: { authorization } });
  const usage = (await res.json()) as UsageExportDto;
  const counted: Record<string, number> = {};
  for (const count of usage.counts) counted[count.client] = (counted[count.client] ?? 0) + count.count;
  return counted;
}

export async function usageBench(seconds = 10) {
  return withServices(async (services, _dir, servicesProcess) => {
    // Reports every second, so that what was counted is in the store soon after the load stops.
    const { base, charged, through, stop } = await ourGatewayVariants(
      services,
      servicesProcess,
      VARIANTS.map((variant) => ({
        target: variant.target,
        deduplicate: variant.deduplicate,
        env: { USAGE_REPORTING: String(variant.reporting), USAGE_REPORT_INTERVAL_MS: '1000' },
        headers: { 'apollographql-client-name': clientOf(variant.target), 'apollographql-client-version': '1' },
      })),
    );
    try {
      // Each target warmed up here rather than in measure(), so that every request sent is known.
      const warmed: Record<string, number> = {};
      const measured = async (targets: Target[]) => {
        for (const t of targets) warmed[t.target] = (warmed[t.target] ?? 0) + (await load({ ...t, connections: 10, seconds: WARMUP_SECONDS })).requests;
        return measure(targets, seconds, charged, 0);
      };
      const result = {
        dashboard: await measured(through(base.dashboard)),
        books: await measured(through(base.books)),
        topBooks: await measured(through(base.topBooks)),
      };
      const sent = (target: string) => (warmed[target] ?? 0) + Object.values(result).reduce((sum, rows) => sum + (rows.find((row) => row.target === target)?.requests ?? 0), 0);
      // The last reports leave within a second of the load: read the registry until its counts stop moving.
      let counted: Record<string, number> = {};
      for (let previous = ''; ;) {
        await new Promise((resolve) => setTimeout(resolve, 2000));
        counted = await registryCounts(services.urls.analytics, services.authorization);
        if (JSON.stringify(counted) === previous) break;
        previous = JSON.stringify(counted);
      }
      const recording = VARIANTS.filter((variant) => variant.reporting).map((variant) => ({
        target: variant.target,
        requestsSent: sent(variant.target),
        countedByRegistry: counted[clientOf(variant.target)] ?? 0,
      }));
      return {
        bench: 'usage',
        seconds,
        loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
        recording,
        ...result,
        table: usageTable(result),
      };
    } finally {
      await stop();
    }
  });
}

if (require.main === module) {
  const seconds = Number(process.argv[2]) || Number(process.env.BENCH_SECONDS) || undefined;
  usageBench(seconds).then(
    (result) => {
      process.stderr.write(`${result.table}\n${JSON.stringify(result.recording)}\n`);
      process.stdout.write(`${JSON.stringify(result)}\n`);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
