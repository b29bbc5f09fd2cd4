/**
 * The gateway next to its peers, as it runs in production: the services in one process
 * (bench/services.ts), our gateway in another, Hive Gateway (the same supergraph, pointed at the same
 * services) in a third, and nginx, when installed, as the reference reverse proxy. Each route is
 * measured at the same concurrency in one run, the targets of a path taking turns in 2-s rounds, so
 * the ratios compare like with like on a shared machine:
 *
 * - `GET /api/books/{id}`: straight to the book service, through nginx, through our gateway;
 * - `{ dashboard {…} }`, `{ books(limit: 10) {…} }` and the best sellers with their catalogue
 *   titles and prices (analytics → book): through our gateway and through Hive Gateway;
 * - `GET /analytics/dashboard` straight to analytics, the REST figure the dashboard query is held to.
 *
 * Every answer is checked: the first against the data (REST and GraphQL agree, no `errors`), every
 * later one byte for byte against the first (a 200 carrying `errors` counts as a mismatch).
 * Everything runs on loopback; what the bench starts it stops, by process group.
 *
 * `node dist/bench/gateway.js [seconds=10]`; `--profile=<dir>` instead profiles our gateway
 * (`node --cpu-prof`) under each path's load, one gateway process per path, and prints the top
 * frames by self time and by total time (bench/profile.ts); with `--hive` it profiles Hive Gateway
 * the same way after ours.
 */
import 'reflect-metadata';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { load, type LoadResult } from './load';
import { topFrames, topLayers } from './profile';

const CONNECTIONS = 10;
const WARMUP_SECONDS = 2;
const dist = path.join(__dirname, '..');
const root = path.join(dist, '..');

export const QUERIES = {
  dashboard: '{ dashboard { totalOrders paidOrders failedPayments totalRevenue averageOrderValue booksSold paymentSuccessRate } }',
  books: '{ books(limit: 10) { id title price } }',
  topBooks: '{ bookReport { topBooks { bookId quantitySold book { id title price } } } }',
};

/** The targets of the gateways run with in-flight deduplication off, each compared with the other. */
const ALONE = { ours: 'ours, no dedup', Hive: 'Hive, no dedup' } as const;

const NGINX_INSTALL = 'apt-get install -y --no-install-recommends nginx-light';

interface Started {
  child: ChildProcess;
  name: string;
}

const ratio = (a: number, b: number) => Number((a / b).toFixed(2));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `command` in a process group of its own (so it and whatever it forks stop together). */
function startGroup(name: string, command: string, args: string[], env: Record<string, string | undefined>, stdout: 'pipe' | 'ignore' = 'ignore'): Started {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'inherit'], detached: true });
  return { child, name };
}

/** SIGTERM to the group, SIGKILL if it is still there after 15 s. */
function stopGroup({ child }: Started): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    const pid = child.pid;
    const kill = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }, 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      clearTimeout(kill);
      resolve();
    }
  });
}

/** Resolves once `probe` answers true; fails if the process exits or 60 s pass. */
async function ready({ child, name }: Started, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${name} was not ready within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * CPU time (user and system, ms) the processes of a group have used so far, from Linux's /proc
 * (undefined elsewhere). A profile's samples are wall time: a process descheduled inside a socket
 * write shows that time in `writev` without spending a CPU on it, so what a request costs is read here.
 */
function groupCpuMs({ child }: Started): number | undefined {
  if (process.platform !== 'linux' || child.pid === undefined) return undefined;
  let ticks = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // After "pid (comm) ": state, ppid, pgrp, …, utime (14th field), stime (15th), in clock ticks of 10 ms.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === child.pid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}

/** CPU µs per request of the target's own process group and of the services, over a measured load. */
export interface CpuPerRequest {
  gateway?: number;
  services?: number;
}

/** The processes whose CPU a load is charged to: the target's (none when it is the service itself) and the services'. */
interface Charged {
  gateways: Partial<Record<string, Started>>;
  services: Started;
}

interface Services {
  urls: Record<'auth' | 'user' | 'book' | 'analytics', string>;
  authorization: string;
}

async function startServices(): Promise<{ started: Started; services: Services }> {
  const started = startGroup('services', process.execPath, [path.join(dist, 'bench', 'services.js')], { LOG_LEVEL: 'warn' }, 'pipe');
  const services = await new Promise<Services>((resolve, reject) => {
    let out = '';
    started.child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as Services);
    });
    started.child.once('exit', (code) => reject(new Error(`services exited with ${code}`)));
  });
  return { started, services };
}

async function startOurGateway(services: Services, port: number, nodeArgs: string[] = [], deduplicate = true): Promise<Started> {
  const started = startGroup('our gateway', process.execPath, [...nodeArgs, path.join(dist, 'gateway', 'main.js')], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    BIND_HOST: '127.0.0.1',
    GATEWAY_PORT: String(port),
    AUTH_URL: services.urls.auth,
    USER_URL: services.urls.user,
    BOOK_URL: services.urls.book,
    ANALYTICS_URL: services.urls.analytics,
    APOLLO_TELEMETRY_DISABLED: '1',
    GATEWAY_DEDUPLICATE_QUERIES: String(deduplicate),
    INTERNAL_API_KEY: randomBytes(16).toString('hex'),
    DB_URL: '',
    KAFKA_BROKERS: '',
  });
  await ready(started, async () => (await fetch(`http://127.0.0.1:${port}/api/books?limit=1`)).status === 200);
  return started;
}

/**
 * The committed supergraph with its routing URLs pointed at this run's services, in a file of its
 * own for each Hive Gateway: it watches the file, and one rewritten under it reads as empty.
 */
function supergraphFor(services: Services, dir: string, port: number): string {
  let sdl = fs.readFileSync(path.join(root, 'schema', 'supergraph.graphql'), 'utf8');
  for (const [name, url] of Object.entries(services.urls)) {
    sdl = sdl.replace(new RegExp(`(join__graph\\(name: "${name}", url: ")[^"]*(")`), `$1${url}/graphql$2`);
  }
  const file = path.join(dir, `supergraph-${port}.graphql`);
  fs.writeFileSync(file, sdl);
  return file;
}

async function startHive(services: Services, port: number, dir: string, nodeArgs: string[] = [], deduplicate = true): Promise<Started> {
  const bin = path.join(root, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js');
  const started = startGroup(
    'Hive Gateway',
    process.execPath,
    [
      ...nodeArgs,
      bin,
      '--fork',
      '1',
      '-c',
      path.join(root, 'bench', 'hive-gateway.config.mjs'),
      'supergraph',
      supergraphFor(services, dir, port),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { NODE_ENV: 'production', BENCH_HIVE_DEDUPLICATE: String(deduplicate) },
  );
  await ready(started, async () => {
    const res = await fetch(`http://127.0.0.1:${port}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
    return res.status === 200;
  });
  return started;
}

function nginxBinary(): string | undefined {
  return (
    ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((file) => fs.existsSync(file)) ??
    (spawnSync('which', ['nginx'], { encoding: 'utf8' }).stdout.trim() || undefined)
  );
}

async function startNginx(bookUrl: string, port: number, dir: string): Promise<Started | undefined> {
  const binary = nginxBinary();
  if (!binary) {
    process.stderr.write(`nginx is not installed, so the REST proxy is not compared with it; install it with: ${NGINX_INSTALL}\n`);
    return undefined;
  }
  const upstream = new URL(bookUrl).host;
  const conf = path.join(dir, 'nginx.conf');
  // Upstream keep-alive needs both `keepalive` and HTTP/1.1 with an empty Connection header.
  fs.writeFileSync(
    conf,
    `worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  upstream book { server ${upstream}; keepalive 32; }
  server { listen 127.0.0.1:${port};
    location / { proxy_pass http://book; proxy_http_version 1.1; proxy_set_header Connection ""; } }
}
`,
  );
  const started = startGroup('nginx', binary, ['-p', dir, '-c', conf, '-e', `${dir}/nginx.err`], {});
  await ready(started, async () => (await fetch(`http://127.0.0.1:${port}/api/books?limit=1`)).status === 200);
  return started;
}

function fail(what: string, detail: unknown): never {
  throw new Error(`${what}: ${typeof detail === 'string' ? detail : JSON.stringify(detail).slice(0, 500)}`);
}

async function graphqlAnswer(url: string, authorization: string, query: string): Promise<{ text: string; data: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  const text = await res.text();
  const body = JSON.parse(text) as { data?: Record<string, unknown>; errors?: unknown };
  if (res.status !== 200 || body.errors || !body.data) fail(`${url} answered ${res.status}`, text);
  return { text, data: body.data };
}

type Row = LoadResult & { target: string; cpuUsPerRequest?: CpuPerRequest };

interface Target {
  target: string;
  url: string;
  method?: 'POST';
  headers: Record<string, string>;
  body?: string;
  expectBody: string;
}

/**
 * The machine is shared, and its load shifts within seconds: the targets of a path take turns in
 * rounds of ROUND_SECONDS, so each sees the same conditions. req/s is over all rounds; p50 and p99
 * are the rounds' percentiles weighted by their requests.
 */
const ROUND_SECONDS = 2;

async function measure(targets: Target[], seconds: number, charged?: Charged, warmupSeconds = WARMUP_SECONDS): Promise<Row[]> {
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

interface Endpoints {
  services: Services;
  ours: string;
  hive?: string;
  /** The same two gateways with in-flight deduplication off: each request its own subgraph calls. */
  oursAlone?: string;
  hiveAlone?: string;
  nginx?: string;
}

/** Every path's targets, each with the checked body every answer must equal. */
async function paths(endpoints: Endpoints) {
  const { services, ours, hive, oursAlone, hiveAlone, nginx } = endpoints;
  const { authorization } = services;
  const json = { authorization, 'content-type': 'application/json' };

  const catalogue = (await (await fetch(`${services.urls.book}/api/books?limit=10`)).json()) as { id: string; title: string; price: number | string }[];
  const route = `/api/books/${catalogue[0].id}`;
  const direct = await fetch(`${services.urls.book}${route}`);
  const bookBody = await direct.text();
  if (direct.status !== 200 || (JSON.parse(bookBody) as { id: string }).id !== catalogue[0].id) fail(`GET ${route}`, bookBody);
  for (const base of [ours, nginx].filter(Boolean)) {
    const via = await (await fetch(`${base}${route}`)).text();
    if (via !== bookBody) fail(`GET ${route} through ${base} differs`, via);
  }

  const restDashboardRes = await fetch(`${services.urls.analytics}/analytics/dashboard`, { headers: { authorization } });
  const restDashboard = await restDashboardRes.text();
  const restFigures = JSON.parse(restDashboard) as { totalOrders: number; paidOrders: number };
  if (restDashboardRes.status !== 200 || !(restFigures.totalOrders > 0)) fail('GET /analytics/dashboard', restDashboard);

  const graphql: Record<keyof typeof QUERIES, Target[]> = { dashboard: [], books: [], topBooks: [] };
  for (const [name, query] of Object.entries(QUERIES) as [keyof typeof QUERIES, string][]) {
    const answers: { target: string; url: string; text: string; data: Record<string, unknown> }[] = [];
    for (const [target, base] of [
      ['ours', ours],
      ['Hive', hive],
      [ALONE.ours, oursAlone],
      [ALONE.Hive, hiveAlone],
    ] as const) {
      if (!base) continue;
      answers.push({ target, url: `${base}/graphql`, ...(await graphqlAnswer(`${base}/graphql`, authorization, query)) });
    }
    const data = answers[0].data;
    for (const other of answers.slice(1)) if (!isDeepStrictEqual(other.data, data)) fail(`${name}: the gateways disagree`, [data, other.data]);
    if (name === 'dashboard') {
      const figures = data.dashboard as { totalOrders: number; paidOrders: number };
      if (figures.totalOrders !== restFigures.totalOrders || figures.paidOrders !== restFigures.paidOrders) fail('dashboard differs from REST', [figures, restFigures]);
    } else if (name === 'books') {
      const books = data.books as { id: string; title: string }[];
      if (books.length !== 10 || books.some((b, i) => b.id !== catalogue[i].id || b.title !== catalogue[i].title)) fail('books differ from REST', books);
    } else {
      const top = (data.bookReport as { topBooks: { bookId: string; book: { id: string; title: string } | null }[] }).topBooks;
      const titles = new Map(catalogue.map((b) => [b.id, b.title]));
      if (top.length !== 10 || top.some((t) => !t.book || t.book.id !== t.bookId || (titles.has(t.bookId) && titles.get(t.bookId) !== t.book.title)))
        fail('top books lack their catalogue books', top);
    }
    graphql[name] = answers.map((a) => ({ target: a.target, url: a.url, method: 'POST', headers: json, body: JSON.stringify({ query: QUERIES[name] }), expectBody: a.text }));
  }

  return {
    rest: [
      { target: 'direct', url: `${services.urls.book}${route}`, headers: {}, expectBody: bookBody },
      ...(nginx ? [{ target: 'nginx', url: `${nginx}${route}`, headers: {}, expectBody: bookBody }] : []),
      { target: 'ours', url: `${ours}${route}`, headers: {}, expectBody: bookBody },
    ] as Target[],
    restDashboard: [{ target: 'direct', url: `${services.urls.analytics}/analytics/dashboard`, headers: { authorization }, expectBody: restDashboard }] as Target[],
    ...graphql,
  };
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
  restDashboard: Row[];
}

export function gatewayTable(result: GatewayRows): string {
  const lines = ['| Path | via | req/s | p50 ms | p99 ms | ratio (req/s, p50, p99) | CPU µs/request (gateway · services) | bad answers |', '|---|---|---|---|---|---|---|---|'];
  const cpu = ({ cpuUsPerRequest: c }: Row) => (c ? `${c.gateway ?? '–'} · ${c.services ?? '–'}` : '');
  const add = (label: string, rows: Row[], reference: string) => {
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
  add('`GET /analytics/dashboard`', result.restDashboard, 'direct');
  const p50 = ratio(by(result.dashboard, 'ours')?.p50Ms ?? NaN, result.restDashboard[0].p50Ms);
  lines.push('', `Dashboard query through our gateway, p50: ${p50}× REST direct.`);
  return lines.join('\n');
}

async function withServices<T>(run: (services: Services, dir: string, process: Started) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-gateway-'));
  const { started, services } = await startServices();
  try {
    return await run(services, dir, started);
  } finally {
    await stopGroup(started);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function gatewayBench(seconds = 10) {
  return withServices(async (services, dir, servicesProcess) => {
    const [oursPort, hivePort, nginxPort, oursAlonePort, hiveAlonePort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
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
      const charged: Charged = { gateways: { ours, Hive: hive, [ALONE.ours]: oursAlone, [ALONE.Hive]: hiveAlone, nginx }, services: servicesProcess };
      const targets = await paths({
        services,
        ours: `http://127.0.0.1:${oursPort}`,
        hive: `http://127.0.0.1:${hivePort}`,
        oursAlone: `http://127.0.0.1:${oursAlonePort}`,
        hiveAlone: `http://127.0.0.1:${hiveAlonePort}`,
        nginx: nginx ? `http://127.0.0.1:${nginxPort}` : undefined,
      });
      const result = {
        bench: 'gateway',
        connections: CONNECTIONS,
        seconds,
        loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
        rest: await measure(targets.rest, seconds, charged),
        dashboard: await measure(targets.dashboard, seconds, charged),
        books: await measure(targets.books, seconds, charged),
        topBooks: await measure(targets.topBooks, seconds, charged),
        restDashboard: await measure(targets.restDashboard, seconds, charged),
      };
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
 * measured load counts: start-up and warm-up are left out of the profile.
 */
export async function gatewayProfile(dir: string, seconds = 10, withHive = false) {
  fs.mkdirSync(dir, { recursive: true });
  return withServices(async (services, scratch, servicesProcess) => {
    const port = await freePort();
    const gateways = withHive ? (['ours', 'Hive'] as const) : (['ours'] as const);
    const profiles: Partial<Record<'ours' | 'Hive', Record<string, PathProfile>>> = {};
    for (const gateway of gateways) {
      const byPath: Record<string, PathProfile> = {};
      for (const name of ['rest', 'dashboard', 'books', 'topBooks'] as const) {
        if (gateway === 'Hive' && name === 'rest') continue;
        const out = path.join(dir, gateway, name);
        fs.rmSync(out, { recursive: true, force: true });
        fs.mkdirSync(out, { recursive: true });
        const began = Date.now();
        const started =
          gateway === 'ours'
            ? await startOurGateway(services, port, ['--cpu-prof', `--cpu-prof-dir=${out}`])
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
  const profiling = profileArg ? gatewayProfile(profileArg.slice('--profile='.length), seconds, process.argv.includes('--hive')) : undefined;
  (profiling ?? gatewayBench(seconds)).then(
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
