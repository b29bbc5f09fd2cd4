/**
 * The gateway's cost, measured as it runs in production: the book service and the gateway each in
 * their own process, the load from this one. The same REST route at the same concurrency, direct
 * and through the gateway, one after the other in one run. Then the admin dashboard as one GraphQL
 * query through the gateway next to the REST `/analytics/dashboard` called directly (the embedded
 * system, one process).
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { load, type LoadResult } from './load';

const CONNECTIONS = 10;
const DASHBOARD_QUERY = '{ dashboard { totalOrders paidOrders failedPayments totalRevenue averageOrderValue booksSold paymentSuccessRate } }';
const dist = path.join(__dirname, '..');

const ratio = (a: number, b: number) => Number((a / b).toFixed(2));

function compare(direct: LoadResult, gateway: LoadResult) {
  return {
    direct,
    gateway,
    throughputRatio: ratio(gateway.requestsPerSecond, direct.requestsPerSecond),
    p50Ratio: ratio(gateway.p50Ms, direct.p50Ms),
    p99Ratio: ratio(gateway.p99Ms, direct.p99Ms),
  };
}

/** Starts `node <script>` with `env` and resolves once `url` answers 200. */
async function startProcess(script: string, env: Record<string, string>, url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(dist, script)], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).status === 200) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${script} did not answer ${url} within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function restProxy(seconds: number) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-gateway-'));
  const common = { DATA_DIR: dataDir, INTERNAL_API_KEY: randomBytes(16).toString('hex'), BIND_HOST: '127.0.0.1', DB_URL: '', KAFKA_BROKERS: '', DB_PREFIX: `bench${randomBytes(3).toString('hex')}_` };
  const [bookPort, gatewayPort] = [18083, 18080];
  const book = await startProcess('subgraphs/book/main.js', { ...common, BOOK_PORT: String(bookPort), SEED_DEMO_CATALOGUE: 'true' }, `http://127.0.0.1:${bookPort}/actuator/health`);
  const gateway = await startProcess('gateway/main.js', { ...common, GATEWAY_PORT: String(gatewayPort), BOOK_URL: `http://127.0.0.1:${bookPort}` }, `http://127.0.0.1:${gatewayPort}/api/books?limit=1`);
  try {
    const [first] = (await (await fetch(`http://127.0.0.1:${bookPort}/api/books?limit=1`)).json()) as { id: string }[];
    const route = `/api/books/${first.id}`;
    // Warm both paths (JIT, connection pools) before either is measured.
    await load({ url: `http://127.0.0.1:${gatewayPort}${route}`, connections: CONNECTIONS, seconds: 2 });
    const direct = await load({ url: `http://127.0.0.1:${bookPort}${route}`, connections: CONNECTIONS, seconds });
    const viaGateway = await load({ url: `http://127.0.0.1:${gatewayPort}${route}`, connections: CONNECTIONS, seconds });
    return { route: 'GET /api/books/{id}', ...compare(direct, viaGateway) };
  } finally {
    await stopProcess(gateway);
    await stopProcess(book);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function dashboard(seconds: number) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-embedded-'));
  const ports = { GATEWAY_PORT: '18180', AUTH_PORT: '18181', USER_PORT: '18182', BOOK_PORT: '18183', ORDER_PORT: '18184', PAYMENT_PORT: '18187', ANALYTICS_PORT: '18188', STRIPE_SIMULATOR_PORT: '18199' };
  const system = await startProcess('scripts/start.js', { ...ports, DATA_DIR: dataDir, DB_URL: '', KAFKA_BROKERS: '', AUTH_RATE_LIMIT_MAX: '100000' }, 'http://127.0.0.1:18180/actuator/health');
  try {
    const login = await fetch('http://127.0.0.1:18181/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@bookstore.local', password: 'Admin12345', deviceId: 'bench' }),
    });
    const { accessToken } = (await login.json()) as { accessToken: string };
    const authorization = `Bearer ${accessToken}`;
    const warmup = { url: 'http://127.0.0.1:18180/graphql', method: 'POST' as const, headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ query: DASHBOARD_QUERY }), connections: CONNECTIONS, seconds: 2 };
    await load(warmup);
    const rest = await load({ url: 'http://127.0.0.1:18188/analytics/dashboard', headers: { authorization }, connections: CONNECTIONS, seconds });
    const graphql = await load({
      url: 'http://127.0.0.1:18180/graphql',
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ query: DASHBOARD_QUERY }),
      connections: CONNECTIONS,
      seconds,
    });
    return { query: 'dashboard', ...compare(rest, graphql) };
  } finally {
    await stopProcess(system);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function gatewayBench(seconds = 10) {
  return { bench: 'gateway', connections: CONNECTIONS, seconds, restProxy: await restProxy(seconds), dashboard: await dashboard(seconds) };
}

if (require.main === module) {
  gatewayBench(Number(process.argv[2]) || undefined).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
