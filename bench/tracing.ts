/**
 * What tracing costs the gateway: three of our gateways, one process each, over the same services
 * (bench/services.ts) and paths as the gateway benchmark, with tracing off, on at 10 % sampling and
 * on at 100 % (parent-based ratio, the default sampler; platform/config/telemetry.ts). The traced
 * ones export to a Zipkin-compatible sink in this process that answers at once and counts the
 * spans it receives, so the figure is the gateway's own cost of making and exporting spans, not a
 * viewer's. The services are the same process for all three and do not trace. The three take turns
 * in the same rounds, every answer checked against the data first (bench/gateway-paths.ts).
 *
 * `node dist/bench/tracing.js [seconds=10]`. The aim (DESIGN.md): at 10 %, at most 10 % less
 * throughput than off. `--profile=<dir> [--ratio=0.1]` instead profiles our gateway traced at that
 * ratio under each path's load, as `node dist/bench/gateway.js --profile=<dir>` does untraced.
 * `--paths=rest,dashboard` measures (or profiles) only the paths named (rest, dashboard, books,
 * topBooks).
 */
import 'reflect-metadata';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { gatewayProfile, measure, selectedPaths, type PathName, type Row } from './gateway';
import { ourGatewayVariants, withServices } from './peers';

const VARIANTS = [
  { target: 'off', ratio: undefined },
  { target: 'on, 10 %', ratio: '0.1' },
  { target: 'on, 100 %', ratio: '1' },
] as const;

/** A Zipkin endpoint that takes every batch and counts its spans. */
async function startSink(): Promise<{ url: string; spans: () => number; close(): void }> {
  let spans = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        spans += (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown[]).length;
      } catch {
        // Not a batch of spans: answered all the same.
      }
      res.statusCode = 202;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/spans`, spans: () => spans, close: () => server.close() };
}

/** Our gateway's settings: tracing off, or exporting to `sink` at `ratio` (parent-based). */
function envOf(ratio: string | undefined, sink: string): Record<string, string> {
  if (ratio === undefined) return { TRACING: 'off', OTEL_TRACES_EXPORTER: 'none' };
  return { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_ZIPKIN_ENDPOINT: sink, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio };
}

const TRACED_PATHS = ['rest', 'dashboard', 'books', 'topBooks'] as const;
type TracedPath = (typeof TRACED_PATHS)[number];

export function tracingTable(result: Partial<Record<TracedPath, Row[]>>): string {
  const lines = ['| Path | tracing | req/s | p50 ms | p99 ms | req/s vs off | CPU µs/request (gateway) | bad answers |', '|---|---|---|---|---|---|---|---|'];
  const labels = { rest: '`GET /api/books/{id}`', dashboard: '`{ dashboard {…} }`', books: '`{ books(limit: 10) {…} }`', topBooks: 'top books → `Book` (2 subgraphs)' };
  for (const [name, rows] of Object.entries(result) as [keyof typeof labels, Row[]][]) {
    const off = rows.find((row) => row.target === 'off');
    for (const row of rows) {
      const vs = off && row !== off ? `${(row.requestsPerSecond / off.requestsPerSecond).toFixed(2)}×` : '';
      lines.push(
        `| ${labels[name]} | ${row.target} | ${row.requestsPerSecond} | ${row.p50Ms} | ${row.p99Ms} | ${vs} | ${row.cpuUsPerRequest?.gateway ?? '–'} | ${row.non2xx + row.errors + row.mismatches} |`,
      );
    }
  }
  return lines.join('\n');
}

export async function tracingBench(seconds = 10, only: readonly TracedPath[] = TRACED_PATHS) {
  const sink = await startSink();
  try {
    return await withServices(async (services, _dir, servicesProcess) => {
      const { base, charged, through, stop } = await ourGatewayVariants(
        services,
        servicesProcess,
        VARIANTS.map((variant) => ({ target: variant.target, env: envOf(variant.ratio, sink.url) })),
      );
      try {
        const loadAverage = os.loadavg().map((l) => Number(l.toFixed(2)));
        const result: Partial<Record<TracedPath, Row[]>> = {};
        for (const name of only) result[name] = await measure(through(base[name]), seconds, charged);
        return {
          bench: 'tracing',
          seconds,
          loadAverage,
          spansExported: sink.spans(),
          ...result,
          table: tracingTable(result),
        };
      } finally {
        await stop();
      }
    });
  } finally {
    sink.close();
  }
}

/** Our gateway traced at `ratio` under each path's load, profiled (bench/gateway.ts, gatewayProfile). */
async function tracedProfile(dir: string, seconds: number | undefined, ratio: string, only: readonly PathName[]) {
  const sink = await startSink();
  try {
    return await gatewayProfile(dir, seconds, false, envOf(ratio, sink.url), only);
  } finally {
    sink.close();
  }
}

if (require.main === module) {
  const option = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  const seconds = Number(process.argv.slice(2).find((arg) => !arg.startsWith('--'))) || Number(process.env.BENCH_SECONDS) || undefined;
  const profileDir = option('profile');
  const only = selectedPaths().filter((name): name is TracedPath => (TRACED_PATHS as readonly string[]).includes(name));
  (profileDir ? tracedProfile(profileDir, seconds, option('ratio') ?? '0.1', only) : tracingBench(seconds, only)).then(
    (result) => {
      if ('table' in result && typeof result.table === 'string') process.stderr.write(`${result.table}\n`);
      process.stdout.write(`${JSON.stringify(result)}\n`);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
