/**
 * The gateway next to its peers, as it runs in production: the services in one process
 * (bench/services.ts), our gateway in another, Hive Gateway (the same supergraph, pointed at the same
 * services) in a third, and nginx, when installed, as the reference reverse proxy. Each route is
 * measured at the same concurrency in one run, the targets of a path taking turns in 2-s rounds, so
 * the ratios compare like with like on a shared machine:
 *
 * - `GET /api/books/{id}`: straight to the book service, through nginx, through our gateway;
 * - `{ dashboard {…} }`, `{ books(limit: 10) {…} }`, the best sellers with their catalogue
 *   titles and prices (analytics → book) and orders with their books' sales (order → book →
 *   analytics): through our gateway, Hive Gateway with its defaults, and the ladder of stronger
 *   gateways (bench/ladder.ts: Hive Gateway with JIT and inbound deduplication, with the Rust
 *   planner, and `grafbase dev` when installed), every Node gateway with one worker;
 * - `GET /analytics/dashboard` straight to analytics, the REST figure the dashboard query is held to.
 *
 * Every answer is checked: the first against the data (REST and GraphQL agree, no `errors`), every
 * later one byte for byte against the first (a 200 carrying `errors` counts as a mismatch).
 * Everything runs on loopback; what the bench starts it stops, by process group.
 *
 * `node dist/bench/gateway.js [seconds=10]`; `--profile=<dir>` instead profiles our gateway
 * (`node --cpu-prof`) under each path's load, one gateway process per path, and prints the top
 * frames by self time and by total time (bench/profile.ts); with `--hive` it profiles Hive Gateway
 * the same way after ours. `--paths=rest,dashboard` measures (or profiles) only the paths named
 * (rest, dashboard, books, topBooks, orderBooks, restDashboard); the others are left out of the table.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ALONE, paths, type Target } from './gateway-paths';
import { load, type LoadResult } from './load';
import { installHivePeers, LADDER, startGrafbase, startHiveVariant } from './ladder';
import { startHive, startNginx, startOurGateway, withServices } from './peers';
import { freePort, groupCpuMs, stopGroup, type Started } from './processes';
import { topFrames, topLayers } from './profile';

const CONNECTIONS = 10;
const WARMUP_SECONDS = 2;

const ratio = (a: number, b: number) => Number((a / b).toFixed(2));

/** CPU µs per request of the target's own process group and of the services, over a measured load. */
export interface CpuPerRequest {
  gateway?: number;
  services?: number;
}

/** The processes whose CPU a load is charged to: the target's (none when it is the service itself) and the services'. */
export interface Charged {
  gateways: Partial<Record<string, Started>>;
  services: Started;
}

export type Row = LoadResult & { target: string; cpuUsPerRequest?: CpuPerRequest };

/**
 * The machine is shared, and its load shifts within seconds: the targets of a path take turns in
 * rounds of ROUND_SECONDS, so each sees the same conditions. req/s is over all rounds; p50 and p99
 * are the rounds' percentiles weighted by their requests.
 */
const ROUND_SECONDS = 2;

export async function measure(targets: Target[], seconds: number, charged?: Charged, warmupSeconds = WARMUP_SECONDS): Promise<Row[]> {
  if (warmupSeconds > 0) for (const t of targets) await load({ ...t, connections: CONNECTIONS, seconds: warmupSeconds });
  const rounds = Math.max(1, Math.round(seconds / ROUND_SECONDS));
  const results = targets.map(() => [] as LoadResult[]);
  const cpuMs = targets.map(() => ({ gateway: 0, services: 0 }));
  const cpuNow = (t: Target) => {
    const gateway = charged?.gateways[t.target];
    return { gateway: gateway ? groupCpuMs(gateway) : undefined, services: charged ? groupCpuMs(charged.services) : undefined };
  };
  for (let round = 0; round < rounds; round += 1) {
    for (const [i, t] of targets.entries()) {
      const before = cpuNow(t);
      results[i].push(await load({ ...t, connections: CONNECTIONS, seconds: seconds / rounds }));
      const after = cpuNow(t);
      cpuMs[i].gateway += (after.gateway ?? NaN) - (before.gateway ?? NaN);
      cpuMs[i].services += (after.services ?? NaN) - (before.services ?? NaN);
    }
  }
  return targets.map((t, i) => {
    const parts = results[i];
    const requests = parts.reduce((sum, r) => sum + r.requests, 0);
    const weighted = (pick: (r: LoadResult) => number) => Number((parts.reduce((sum, r) => sum + pick(r) * r.requests, 0) / Math.max(1, requests)).toFixed(1));
    const perRequest = (ms: number) => (Number.isFinite(ms) && requests > 0 ? Math.round((ms * 1000) / requests) : undefined);
    return {
      target: t.target,
      requestsPerSecond: Math.round(requests / seconds),
      p50Ms: weighted((r) => r.p50Ms),
      p99Ms: weighted((r) => r.p99Ms),
      requests,
      non2xx: parts.reduce((sum, r) => sum + r.non2xx, 0),
      errors: parts.reduce((sum, r) => sum + r.errors, 0),
      mismatches: parts.reduce((sum, r) => sum + r.mismatches, 0),
      cpuUsPerRequest: { gateway: perRequest(cpuMs[i].gateway), services: perRequest(cpuMs[i].services) },
    };
  });
}

function by(rows: Row[], target: string): Row | undefined {
  return rows.find((row) => row.target === target);
}

function compared(row: Row | undefined, base: Row | undefined) {
  if (!row || !base) return undefined;
  return { throughput: ratio(row.requestsPerSecond, base.requestsPerSecond), p50: ratio(row.p50Ms, base.p50Ms), p99: ratio(row.p99Ms, base.p99Ms) };
}

/** The table `npm run bench` prints: one line per path and target, ratios against the path's reference. */
export interface GatewayRows {
  rest: Row[];
  dashboard: Row[];
  books: Row[];
  topBooks: Row[];
  orderBooks: Row[];
  restDashboard: Row[];
}

/** The paths a run measures: all, or those `--paths=` names. */
export type PathName = keyof GatewayRows;
export const PATH_NAMES: readonly PathName[] = ['rest', 'dashboard', 'books', 'topBooks', 'orderBooks', 'restDashboard'];

/** The paths `--paths=a,b` names on the command line (every path without it); an unknown name fails. */
export function selectedPaths(argv: readonly string[] = process.argv): readonly PathName[] {
  const arg = argv.find((a) => a.startsWith('--paths='));
  if (!arg) return PATH_NAMES;
  const names = arg.slice('--paths='.length).split(',').filter(Boolean);
  const unknown = names.filter((name) => !(PATH_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown path ${unknown.join(', ')} (known: ${PATH_NAMES.join(', ')})`);
  return names as PathName[];
}

export function gatewayTable(result: Partial<GatewayRows>): string {
  const lines = ['| Path | via | req/s | p50 ms | p99 ms | ratio (req/s, p50, p99) | CPU µs/request (gateway · services) | bad answers |', '|---|---|---|---|---|---|---|---|'];
  const cpu = ({ cpuUsPerRequest: c }: Row) => (c ? `${c.gateway ?? '–'} · ${c.services ?? '–'}` : '');
  const add = (label: string, rows: Row[] = [], reference: string) => {
    for (const row of rows) {
      // Our gateway without deduplication is compared with Hive Gateway without it.
      const against = row.target === ALONE.ours ? ALONE.Hive : reference;
      const r = row.target === against || row.target === ALONE.Hive ? undefined : compared(row, by(rows, against));
      const vs = r ? `${r.throughput}× · ${r.p50}× · ${r.p99}× of ${against}` : '';
      lines.push(`| ${label} | ${row.target} | ${row.requestsPerSecond} | ${row.p50Ms} | ${row.p99Ms} | ${vs} | ${cpu(row)} | ${row.non2xx + row.errors + row.mismatches} |`);
    }
  };
  add('`GET /api/books/{id}`', result.rest, 'direct');
  add('`{ dashboard {…} }`', result.dashboard, 'Hive');
  add('`{ books(limit: 10) {…} }`', result.books, 'Hive');
  add('top books → `Book` (2 subgraphs)', result.topBooks, 'Hive');
  add('orders → `Book` → sales (3 subgraphs)', result.orderBooks, 'Hive');
  add('`GET /analytics/dashboard`', result.restDashboard, 'direct');
  if (result.dashboard && result.restDashboard) {
    const p50 = ratio(by(result.dashboard, 'ours')?.p50Ms ?? NaN, result.restDashboard[0].p50Ms);
    lines.push('', `Dashboard query through our gateway, p50: ${p50}× REST direct.`);
  }
  return lines.join('\n');
}

export async function gatewayBench(seconds = 10, only: readonly PathName[] = PATH_NAMES) {
  installHivePeers();
  return withServices(async (services, dir, servicesProcess) => {
    const [oursPort, hivePort, nginxPort, oursAlonePort, hiveAlonePort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    const [jitPort, rustPort, grafbasePort] = [await freePort(), await freePort(), await freePort()];
    const running: Started[] = [];
    try {
      const ours = await startOurGateway(services, oursPort);
      running.push(ours);
      const hive = await startHive(services, hivePort, dir);
      running.push(hive);
      const oursAlone = await startOurGateway(services, oursAlonePort, [], false);
      running.push(oursAlone);
      const hiveAlone = await startHive(services, hiveAlonePort, dir, [], false);
      running.push(hiveAlone);
      const nginx = await startNginx(services.urls.book, nginxPort, dir);
      if (nginx) running.push(nginx);
      const hiveJit = await startHiveVariant(services, jitPort, dir, 'jit');
      running.push(hiveJit);
      const hiveRust = await startHiveVariant(services, rustPort, dir, 'rust');
      running.push(hiveRust);
      const grafbase = await startGrafbase(services, grafbasePort, dir);
      if (grafbase) running.push(grafbase);
      const ladder = { [LADDER.hiveJit]: hiveJit, [LADDER.hiveRust]: hiveRust, [LADDER.grafbase]: grafbase };
      const charged: Charged = { gateways: { ours, Hive: hive, [ALONE.ours]: oursAlone, [ALONE.Hive]: hiveAlone, nginx, ...ladder }, services: servicesProcess };
      const targets = await paths({
        services,
        ours: `http://127.0.0.1:${oursPort}`,
        hive: `http://127.0.0.1:${hivePort}`,
        oursAlone: `http://127.0.0.1:${oursAlonePort}`,
        hiveAlone: `http://127.0.0.1:${hiveAlonePort}`,
        nginx: nginx ? `http://127.0.0.1:${nginxPort}` : undefined,
        ladder: {
          [LADDER.hiveJit]: `http://127.0.0.1:${jitPort}`,
          [LADDER.hiveRust]: `http://127.0.0.1:${rustPort}`,
          [LADDER.grafbase]: grafbase ? `http://127.0.0.1:${grafbasePort}` : undefined,
        },
      });
      const loadAverage = os.loadavg().map((l) => Number(l.toFixed(2)));
      const measured: Partial<GatewayRows> = {};
      for (const name of only) measured[name] = await measure(targets[name], seconds, charged);
      const result = { bench: 'gateway', connections: CONNECTIONS, seconds, loadAverage, ...measured };
      return { ...result, table: gatewayTable(result) };
    } finally {
      for (const started of running.reverse()) await stopGroup(started);
    }
  });
}

/** What a profile says about one gateway under one path's load. */
export interface PathProfile {
  load: { requestsPerSecond: number; p50Ms: number; bad: number; cpuUsPerRequest?: CpuPerRequest };
  self: ReturnType<typeof topFrames>;
  total: ReturnType<typeof topLayers>;
}

/** Of the profiles a run wrote (Hive Gateway's primary and its worker), the one with the most samples. */
function busiestProfile(dir: string): string {
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(dir, f));
  if (files.length === 0) throw new Error(`no CPU profile was written in ${dir}`);
  return files.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0];
}

/**
 * Each gateway under each path's load with `--cpu-prof` (Hive Gateway's worker inherits it), one
 * process per gateway and path; the top frames by self time and by total time of each. Only the
 * measured load counts: start-up and warm-up are left out of the profile. `env` is handed to our
 * gateway (bench/tracing.ts profiles it with tracing on).
 */
export async function gatewayProfile(dir: string, seconds = 10, withHive = false, env: Record<string, string> = {}, only: readonly PathName[] = PATH_NAMES) {
  fs.mkdirSync(dir, { recursive: true });
  return withServices(async (services, scratch, servicesProcess) => {
    const port = await freePort();
    const gateways = withHive ? (['ours', 'Hive'] as const) : (['ours'] as const);
    const profiles: Partial<Record<'ours' | 'Hive', Record<string, PathProfile>>> = {};
    for (const gateway of gateways) {
      const byPath: Record<string, PathProfile> = {};
      for (const name of ['rest', 'dashboard', 'books', 'topBooks', 'orderBooks'] as const) {
        if ((gateway === 'Hive' && name === 'rest') || !only.includes(name)) continue;
        const out = path.join(dir, gateway, name);
        fs.rmSync(out, { recursive: true, force: true });
        fs.mkdirSync(out, { recursive: true });
        const began = Date.now();
        const started =
          gateway === 'ours'
            ? await startOurGateway(services, port, ['--cpu-prof', `--cpu-prof-dir=${out}`], true, env)
            : await startHive(services, port, scratch, ['--cpu-prof', `--cpu-prof-dir=${out}`]);
        let skipMs = 0;
        let measured: PathProfile['load'];
        try {
          const targets = await paths({ services, ...(gateway === 'ours' ? { ours: `http://127.0.0.1:${port}` } : { ours: '', hive: `http://127.0.0.1:${port}` }) });
          const [target] = targets[name].filter((t) => t.target === gateway);
          await load({ ...target, connections: CONNECTIONS, seconds: WARMUP_SECONDS });
          skipMs = Date.now() - began;
          const [row] = await measure([target], seconds, { gateways: { [gateway]: started }, services: servicesProcess }, 0);
          measured = { requestsPerSecond: row.requestsPerSecond, p50Ms: row.p50Ms, bad: row.non2xx + row.errors + row.mismatches, cpuUsPerRequest: row.cpuUsPerRequest };
          const cpu = row.cpuUsPerRequest;
          process.stderr.write(
            `${gateway} ${name}: ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, CPU µs/request gateway ${cpu?.gateway} services ${cpu?.services}, bad ${measured.bad}\n`,
          );
        } finally {
          await stopGroup(started);
        }
        const file = busiestProfile(out);
        byPath[name] = { load: measured, self: topFrames(file, 15, skipMs), total: topLayers(file, 30, skipMs) };
      }
      profiles[gateway] = byPath;
    }
    return profiles;
  });
}

if (require.main === module) {
  const profileArg = process.argv.find((arg) => arg.startsWith('--profile='));
  const seconds = Number(process.argv.slice(2).find((arg) => !arg.startsWith('--'))) || Number(process.env.BENCH_SECONDS) || undefined;
  const only = selectedPaths();
  const profiling = profileArg ? gatewayProfile(profileArg.slice('--profile='.length), seconds, process.argv.includes('--hive'), {}, only) : undefined;
  (profiling ?? gatewayBench(seconds, only)).then(
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
