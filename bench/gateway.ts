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
 * frames by self time.
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
import { topFrames } from './profile';

const CONNECTIONS = 10;
const WARMUP_SECONDS = 2;
const dist = path.join(__dirname, '..');
const root = path.join(dist, '..');

export const QUERIES = {
  dashboard: '{ dashboard { totalOrders paidOrders failedPayments totalRevenue averageOrderValue booksSold paymentSuccessRate } }',
  books: '{ books(limit: 10) { id title price } }',
  topBooks: '{ bookReport { topBooks { bookId quantitySold book { id title price } } } }',
};

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

async function startOurGateway(services: Services, port: number, nodeArgs: string[] = []): Promise<Started> {
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
    INTERNAL_API_KEY: randomBytes(16).toString('hex'),
    DB_URL: '',
    KAFKA_BROKERS: '',
  });
  await ready(started, async () => (await fetch(`http://127.0.0.1:${port}/api/books?limit=1`)).status === 200);
  return started;
}

/** The committed supergraph with its routing URLs pointed at this run's services. */
function supergraphFor(services: Services, dir: string): string {
  let sdl = fs.readFileSync(path.join(root, 'schema', 'supergraph.graphql'), 'utf8');
  for (const [name, url] of Object.entries(services.urls)) {
    sdl = sdl.replace(new RegExp(`(join__graph\\(name: "${name}", url: ")[^"]*(")`), `$1${url}/graphql$2`);
  }
  const file = path.join(dir, 'supergraph.graphql');
  fs.writeFileSync(file, sdl);
  return file;
}

async function startHive(services: Services, port: number, dir: string): Promise<Started> {
  const bin = path.join(root, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js');
  const started = startGroup(
    'Hive Gateway',
    process.execPath,
    [bin, '--fork', '1', '-c', path.join(root, 'bench', 'hive-gateway.config.mjs'), 'supergraph', supergraphFor(services, dir), '--host', '127.0.0.1', '--port', String(port)],
    { NODE_ENV: 'production' },
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

type Row = LoadResult & { target: string };

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

async function measure(targets: Target[], seconds: number): Promise<Row[]> {
  for (const t of targets) await load({ ...t, connections: CONNECTIONS, seconds: WARMUP_SECONDS });
  const rounds = Math.max(1, Math.round(seconds / ROUND_SECONDS));
  const results = targets.map(() => [] as LoadResult[]);
  for (let round = 0; round < rounds; round += 1) {
    for (const [i, t] of targets.entries()) results[i].push(await load({ ...t, connections: CONNECTIONS, seconds: seconds / rounds }));
  }
  return targets.map((t, i) => {
    const parts = results[i];
    const requests = parts.reduce((sum, r) => sum + r.requests, 0);
    const weighted = (pick: (r: LoadResult) => number) => Number((parts.reduce((sum, r) => sum + pick(r) * r.requests, 0) / Math.max(1, requests)).toFixed(1));
    return {
      target: t.target,
      requestsPerSecond: Math.round(requests / seconds),
      p50Ms: weighted((r) => r.p50Ms),
      p99Ms: weighted((r) => r.p99Ms),
      requests,
      non2xx: parts.reduce((sum, r) => sum + r.non2xx, 0),
      errors: parts.reduce((sum, r) => sum + r.errors, 0),
      mismatches: parts.reduce((sum, r) => sum + r.mismatches, 0),
    };
  });
}

interface Endpoints {
  services: Services;
  ours: string;
  hive?: string;
  nginx?: string;
}

/** Every path's targets, each with the checked body every answer must equal. */
async function paths(endpoints: Endpoints) {
  const { services, ours, hive, nginx } = endpoints;
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
  const lines = ['| Path | via | req/s | p50 ms | p99 ms | ratio (req/s, p50, p99) | bad answers |', '|---|---|---|---|---|---|---|'];
  const add = (label: string, rows: Row[], reference: string) => {
    for (const row of rows) {
      const r = row.target === reference ? undefined : compared(row, by(rows, reference));
      const vs = r ? `${r.throughput}× · ${r.p50}× · ${r.p99}× of ${reference}` : '';
      lines.push(`| ${label} | ${row.target} | ${row.requestsPerSecond} | ${row.p50Ms} | ${row.p99Ms} | ${vs} | ${row.non2xx + row.errors + row.mismatches} |`);
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

async function withServices<T>(run: (services: Services, dir: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-gateway-'));
  const { started, services } = await startServices();
  try {
    return await run(services, dir);
  } finally {
    await stopGroup(started);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function gatewayBench(seconds = 10) {
  return withServices(async (services, dir) => {
    const [oursPort, hivePort, nginxPort] = [await freePort(), await freePort(), await freePort()];
    const running: Started[] = [];
    try {
      running.push(await startOurGateway(services, oursPort));
      running.push(await startHive(services, hivePort, dir));
      const nginx = await startNginx(services.urls.book, nginxPort, dir);
      if (nginx) running.push(nginx);
      const targets = await paths({
        services,
        ours: `http://127.0.0.1:${oursPort}`,
        hive: `http://127.0.0.1:${hivePort}`,
        nginx: nginx ? `http://127.0.0.1:${nginxPort}` : undefined,
      });
      const result = {
        bench: 'gateway',
        connections: CONNECTIONS,
        seconds,
        loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
        rest: await measure(targets.rest, seconds),
        dashboard: await measure(targets.dashboard, seconds),
        books: await measure(targets.books, seconds),
        topBooks: await measure(targets.topBooks, seconds),
        restDashboard: await measure(targets.restDashboard, seconds),
      };
      return { ...result, table: gatewayTable(result) };
    } finally {
      for (const started of running.reverse()) await stopGroup(started);
    }
  });
}

/** Our gateway under each path's load with `--cpu-prof`, one process per path; the top frames of each. */
export async function gatewayProfile(dir: string, seconds = 10) {
  fs.mkdirSync(dir, { recursive: true });
  return withServices(async (services) => {
    const port = await freePort();
    const profiles: Record<string, ReturnType<typeof topFrames>> = {};
    for (const name of ['rest', 'dashboard', 'books', 'topBooks'] as const) {
      const out = path.join(dir, name);
      fs.rmSync(out, { recursive: true, force: true });
      const began = Date.now();
      const gateway = await startOurGateway(services, port, ['--cpu-prof', `--cpu-prof-dir=${out}`]);
      let skipMs = 0;
      try {
        const targets = await paths({ services, ours: `http://127.0.0.1:${port}` });
        const [target] = targets[name].filter((t) => t.target === 'ours');
        await load({ ...target, connections: CONNECTIONS, seconds: WARMUP_SECONDS });
        // Only the measured load counts: start-up and warm-up are left out of the profile.
        skipMs = Date.now() - began;
        const row = await load({ ...target, connections: CONNECTIONS, seconds });
        process.stderr.write(`${name}: ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, bad ${row.non2xx + row.errors + row.mismatches}\n`);
      } finally {
        await stopGroup(gateway);
      }
      const [file] = fs.readdirSync(out).filter((f) => f.endsWith('.cpuprofile'));
      profiles[name] = topFrames(path.join(out, file), 15, skipMs);
    }
    return profiles;
  });
}

if (require.main === module) {
  const profileArg = process.argv.find((arg) => arg.startsWith('--profile='));
  const seconds = Number(process.argv.slice(2).find((arg) => !arg.startsWith('--'))) || Number(process.env.BENCH_SECONDS) || undefined;
  (profileArg ? gatewayProfile(profileArg.slice('--profile='.length), seconds) : gatewayBench(seconds)).then(
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
