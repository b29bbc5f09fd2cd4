/**
 * What the gateway benchmark runs side by side on loopback: the services in one process
 * (bench/services.ts), our gateway, Hive Gateway over the same supergraph and services, and nginx,
 * when installed, as the reference reverse proxy.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { paths, type Target } from './gateway-paths';
import { freePort, ready, startGroup, stopGroup, type Started } from './processes';

const dist = path.join(__dirname, '..');
const root = path.join(dist, '..');

const NGINX_INSTALL = 'apt-get install -y --no-install-recommends nginx-light';

export interface Services {
  urls: Record<'auth' | 'user' | 'book' | 'order' | 'analytics', string>;
  authorization: string;
}

/**
 * The internal key of this run, shared by the services and our gateways as in production: the
 * services then believe the forwarded headers our gateway sends with its proof (platform/forwarded.ts).
 */
const INTERNAL_API_KEY = randomBytes(16).toString('hex');

async function startServices(): Promise<{ started: Started; services: Services }> {
  const started = startGroup('services', process.execPath, [path.join(dist, 'bench', 'services.js')], { LOG_LEVEL: 'warn', INTERNAL_API_KEY }, 'pipe');
  const services = await new Promise<Services>((resolve, reject) => {
    let out = '';
    started.child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      // The services' own log lines are JSON too: the answer is the line that starts with its urls.
      const line = out.split('\n').find((l) => l.startsWith('{"urls"'));
      if (line) resolve(JSON.parse(line) as Services);
    });
    started.child.once('exit', (code) => reject(new Error(`services exited with ${code}`)));
  });
  return { started, services };
}

/** `env`: settings beside those of the bench (tracing's, for bench/tracing.ts). */
export async function startOurGateway(services: Services, port: number, nodeArgs: string[] = [], deduplicate = true, env: Record<string, string> = {}): Promise<Started> {
  const started = startGroup('our gateway', process.execPath, [...nodeArgs, path.join(dist, 'gateway', 'main.js')], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    BIND_HOST: '127.0.0.1',
    GATEWAY_PORT: String(port),
    AUTH_URL: services.urls.auth,
    USER_URL: services.urls.user,
    BOOK_URL: services.urls.book,
    ORDER_URL: services.urls.order,
    ANALYTICS_URL: services.urls.analytics,
    APOLLO_TELEMETRY_DISABLED: '1',
    GATEWAY_DEDUPLICATE_QUERIES: String(deduplicate),
    GATEWAY_DEDUPLICATE_REQUESTS: String(deduplicate),
    INTERNAL_API_KEY,
    DB_URL: '',
    KAFKA_BROKERS: '',
    ...env,
  });
  await ready(started, async () => (await fetch(`http://127.0.0.1:${port}/api/books?limit=1`)).status === 200);
  return started;
}

/**
 * The committed supergraph with its routing URLs pointed at this run's services, in a file of its
 * own for each Hive Gateway: it watches the file, and one rewritten under it reads as empty.
 */
export function supergraphFor(services: Services, dir: string, port: number): string {
  let sdl = fs.readFileSync(path.join(root, 'schema', 'supergraph.graphql'), 'utf8');
  for (const [name, url] of Object.entries(services.urls)) {
    sdl = sdl.replace(new RegExp(`(join__graph\\(name: "${name}", url: ")[^"]*(")`), `$1${url}/graphql$2`);
  }
  const file = path.join(dir, `supergraph-${port}.graphql`);
  fs.writeFileSync(file, sdl);
  return file;
}

export async function startHive(services: Services, port: number, dir: string, nodeArgs: string[] = [], deduplicate = true): Promise<Started> {
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

export async function startNginx(bookUrl: string, port: number, dir: string): Promise<Started | undefined> {
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

/** Runs `run` with the services started and a scratch folder, both gone after it. */
export async function withServices<T>(run: (services: Services, dir: string, process: Started) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-gateway-'));
  const { started, services } = await startServices();
  try {
    return await run(services, dir, started);
  } finally {
    await stopGroup(started);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One of our gateways beside others in a bench: its name in the table, its settings, and headers its requests add. */
export interface GatewayVariant {
  target: string;
  deduplicate?: boolean;
  env: Record<string, string>;
  headers?: Record<string, string>;
}

/**
 * Our gateways side by side, one process each, over the same services (bench/tracing.ts,
 * bench/usage.ts): each path's request through the first, checked against the data
 * (bench/gateway-paths.ts), and `through` the same request to every one of them, checked alike.
 */
export async function ourGatewayVariants(services: Services, servicesProcess: Started, variants: readonly GatewayVariant[]) {
  const running: Started[] = [];
  const stop = async () => {
    for (const started of running.reverse()) await stopGroup(started);
  };
  try {
    const urls: string[] = [];
    for (const variant of variants) {
      const port = await freePort();
      running.push(await startOurGateway(services, port, [], variant.deduplicate ?? true, variant.env));
      urls.push(`http://127.0.0.1:${port}`);
    }
    const charged = { gateways: Object.fromEntries(variants.map((variant, i) => [variant.target, running[i]])), services: servicesProcess };
    const base = await paths({ services, ours: urls[0] });
    const through = (targets: Target[]): Target[] => {
      const ours = targets.find((t) => t.target === 'ours');
      if (!ours) throw new Error('no target through our gateway');
      return variants.map((variant, i) => ({ ...ours, target: variant.target, url: ours.url.replace(urls[0], urls[i]), headers: { ...ours.headers, ...variant.headers } }));
    };
    return { base, charged, through, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
