/**
 * The stronger gateways the benchmark sets beside ours and Hive Gateway's defaults, each started as
 * the public gateway benchmarks start them (../shared notes: gateway-peers-ladder): Hive Gateway
 * with JIT and inbound deduplication, Hive Gateway with the Rust query planner
 * (`@graphql-hive/router-runtime`, without JIT), and `grafbase dev`, a Rust gateway on our graph
 * (the dev server, not Grafbase's production binary, so not Grafbase's published figure). Every Node
 * gateway runs one worker: ours is one process, Hive Gateway `--fork 1`.
 *
 * The packages are not the project's dependencies: the bench installs the Hive ones at run time
 * into a scratch folder kept between runs (`.cache/bench-peers`, ignored by git). Grafbase's
 * 104 MB CLI is run only when it is installed there:
 * `npm install --prefix .cache/bench-peers @grafbase/cli-x86_64-unknown-linux-musl@0.103.0`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { supergraphFor, type Services } from './peers';
import { ready, startGroup, type Started } from './processes';

const root = path.join(__dirname, '..', '..');
export const PEERS_DIR = path.join(root, '.cache', 'bench-peers');

const HIVE = { name: '@graphql-hive/gateway', version: '2.15.1' };
const RUST_PLANNER = { name: '@graphql-hive/router-runtime', version: '1.4.23' };
const GRAFBASE = { name: '@grafbase/cli-x86_64-unknown-linux-musl', version: '0.103.0' };
export const GRAFBASE_INSTALL = `npm install --prefix .cache/bench-peers ${GRAFBASE.name}@${GRAFBASE.version}`;

/** The ladder's targets, as the bench's table names them. */
export const LADDER = { hiveJit: 'Hive JIT + inbound dedup', hiveRust: 'Hive Rust planner', grafbase: 'grafbase dev' } as const;

const installed = (pkg: { name: string; version: string }) => {
  const file = path.join(PEERS_DIR, 'node_modules', pkg.name, 'package.json');
  return fs.existsSync(file) && (JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: string }).version === pkg.version;
};

/** Installs the Hive packages into the scratch folder unless they are there at these versions. */
export function installHivePeers(): void {
  if (installed(HIVE) && installed(RUST_PLANNER)) return;
  fs.mkdirSync(PEERS_DIR, { recursive: true });
  const manifest = path.join(PEERS_DIR, 'package.json');
  if (!fs.existsSync(manifest)) fs.writeFileSync(manifest, '{ "private": true }\n');
  process.stderr.write(`Installing ${HIVE.name}@${HIVE.version} and ${RUST_PLANNER.name}@${RUST_PLANNER.version} into ${PEERS_DIR}\n`);
  const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund', `${HIVE.name}@${HIVE.version}`, `${RUST_PLANNER.name}@${RUST_PLANNER.version}`], {
    cwd: PEERS_DIR,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (npm.status !== 0) throw new Error(`npm install of the Hive peers failed (${npm.status})`);
}

/** The grafbase binary when its package is installed in the scratch folder; the package ships it without a .bin link. */
export function grafbaseBinary(): string | undefined {
  if (!installed(GRAFBASE)) return undefined;
  const dir = path.join(PEERS_DIR, 'node_modules', GRAFBASE.name);
  const found = (fs.readdirSync(dir, { recursive: true }) as string[]).find((entry) => path.basename(entry) === 'grafbase');
  return found ? path.join(dir, found) : undefined;
}

const answersTypename = (port: number) => async () => {
  const res = await fetch(`http://127.0.0.1:${port}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
  return res.status === 200;
};

/** Hive Gateway from the scratch folder, with JIT and inbound deduplication or with the Rust planner (bench/hive-gateway-ladder.config.mjs). */
export async function startHiveVariant(services: Services, port: number, dir: string, variant: 'jit' | 'rust'): Promise<Started> {
  const bin = path.join(PEERS_DIR, 'node_modules', HIVE.name, 'dist', 'bin.js');
  const planner = variant === 'rust' ? require.resolve(RUST_PLANNER.name, { paths: [PEERS_DIR] }) : '';
  const args = [bin, ...(variant === 'jit' ? ['--jit'] : []), '--fork', '1', '-c', path.join(root, 'bench', 'hive-gateway-ladder.config.mjs')];
  const started = startGroup(
    variant === 'jit' ? LADDER.hiveJit : LADDER.hiveRust,
    process.execPath,
    [...args, 'supergraph', supergraphFor(services, dir, port), '--host', '127.0.0.1', '--port', String(port)],
    { NODE_ENV: 'production', BENCH_HIVE_RUST_PLANNER: planner },
  );
  await ready(started, answersTypename(port));
  return started;
}

/** `grafbase dev` over the running services' subgraphs (it composes their committed SDLs itself), or undefined when it is not installed. */
export async function startGrafbase(services: Services, port: number, dir: string): Promise<Started | undefined> {
  const binary = grafbaseBinary();
  if (!binary) {
    process.stderr.write(`grafbase is not installed, so the ladder runs without it; install it with: ${GRAFBASE_INSTALL}\n`);
    return undefined;
  }
  const subgraphs = (['auth', 'user', 'book', 'order', 'analytics'] as const).map(
    (name) => `[subgraphs.${name}]\nurl = "${services.urls[name]}/graphql"\nschema_path = "${path.join(root, 'schema', 'subgraphs', `${name}.graphql`)}"\n`,
  );
  const config = path.join(dir, 'grafbase.toml');
  fs.writeFileSync(config, `[[headers]]\nrule = "forward"\nname = "authorization"\n\n${subgraphs.join('\n')}`);
  // It writes its UI assets under $HOME/.grafbase: a scratch HOME keeps them out of the user's.
  const home = path.join(dir, 'grafbase-home');
  fs.mkdirSync(home, { recursive: true });
  const started = startGroup(LADDER.grafbase, binary, ['dev', '-c', config, '--listen-address', `127.0.0.1:${port}`], { HOME: home });
  await ready(started, answersTypename(port));
  return started;
}
