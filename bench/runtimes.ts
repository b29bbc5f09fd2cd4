/**
 * The same benches on Node 20 and on Node 24 in one run on one machine, taking turns bench by bench:
 * the gateway ladder and the REST proxy against direct (bench/gateway.ts), ingestion
 * (bench/analytics.ts) and the outbox end to end (bench/events.ts), each in its own process through
 * bench/run.ts. Node 24 runs this tree. Node 20 runs a baseline commit's tree (default: where this
 * tree branched from main), since this tree's dependencies need Node 22 or newer: it is exported
 * into .tmp/runtimes/<commit>, installed and built with Node 20 once, and kept. Both Nodes come from
 * scripts/node.sh. Prints the figures side by side with their ratio (24 ÷ 20) and writes them to
 * bench/results. The benches use MariaDB and Kafka when DB_URL and KAFKA_BROKERS say so, as alone.
 *
 * `npm run bench:runtimes [-- [gateway|analytics|events ...] [--baseline=<ref>]]`; BENCH_SECONDS shortens each gateway measurement
 * (default 10 s), BENCH_ANALYTICS_EVENTS sets the analytics backlog (default 100000).
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { run } from './run';

const root = path.resolve(__dirname, '..', '..');

const ARGS: Record<string, string[]> = {
  gateway: [process.env.BENCH_SECONDS ?? '10'],
  analytics: ['10000', process.env.BENCH_ANALYTICS_EVENTS ?? '100000'],
  events: ['20000'],
};

function must(command: string, args: string[], options: SpawnSyncOptions = {}): string {
  const child = spawnSync(command, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...options });
  if (child.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${child.status ?? child.signal})`);
  return String(child.stdout).trim();
}

/** The folder of Node <major> as scripts/node.sh installs it (bin/node, include/node). */
const nodeDir = (major: number) => must('bash', [path.join(root, 'scripts', 'node.sh'), String(major)]);

/** The baseline commit's tree, built with Node 20 once (its bench scripts under dist/bench). */
function baselineTree(ref: string, node20: string): string {
  const commit = must('git', ['rev-parse', '--short=12', `${ref}^{commit}`]);
  const dir = path.join(root, '.tmp', 'runtimes', commit);
  if (!fs.existsSync(path.join(dir, 'dist', 'bench', 'run.js'))) build(commit, dir, node20);
  return dir;
}

/** The commit exported into `dir`, installed and built with Node 20. */
function build(commit: string, dir: string, node20: string): void {
  process.stderr.write(`building ${commit} with Node 20 in ${path.relative(root, dir)}\n`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  must('bash', ['-c', 'git archive "$1" | tar -x -C "$2"', 'archive', commit, dir]);
  const env = { ...process.env, PATH: `${path.join(node20, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`, npm_config_nodedir: node20 };
  // Errors only: on Node 20 the baseline's own lock warns of the engines its packages ask for.
  must('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'] });
  must('npm', ['run', 'build:server'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'] });
}

type Result = Record<string, unknown>;
interface GatewayRow {
  target: string;
  requestsPerSecond: number;
  p99Ms: number;
}

const GATEWAY_PATHS: Record<string, string> = {
  rest: '`GET /api/books/{id}`',
  dashboard: '`{ dashboard }`',
  books: '`{ books(limit: 10) }`',
  topBooks: 'top books → Book',
  orderBooks: 'orders → Book → sales',
  restDashboard: '`GET /analytics/dashboard`',
};

/** A figure of a bench's result by its dotted path, when it is a number. */
function at(result: Result | undefined, dotted: string): number | undefined {
  let value: unknown = result;
  for (const key of dotted.split('.')) value = value !== null && typeof value === 'object' ? (value as Result)[key] : undefined;
  return typeof value === 'number' ? value : undefined;
}

/** The figures compared, by name: every gateway row's throughput, our gateway's and direct's p99, the event rates. */
function figures(results: Record<string, Result>): Map<string, number | undefined> {
  const out = new Map<string, number | undefined>();
  for (const [key, label] of Object.entries(GATEWAY_PATHS)) {
    const rows = (results.gateway as Record<string, GatewayRow[] | undefined> | undefined)?.[key] ?? [];
    for (const row of rows) {
      out.set(`${label} via ${row.target}, req/s`, row.requestsPerSecond);
      if (row.target === 'ours' || row.target === 'direct') out.set(`${label} via ${row.target}, p99 ms`, row.p99Ms);
    }
  }
  // From its first event to its last on Kafka; drained as published on the in-process bus (ingest 0).
  const ingest = at(results.analytics, 'ingestion.backlog.ingestEventsPerSecond');
  out.set('ingestion (analytics backlog), events/s', ingest ? ingest : at(results.analytics, 'ingestion.backlog.eventsPerSecond'));
  out.set('analytics dashboard read after the backlog, p50 ms', at(results.analytics, 'p50Ms.after1m.dashboard'));
  out.set('outbox enqueue, events/s', at(results.events, 'enqueue.perSecond'));
  out.set('outbox relay, events/s', at(results.events, 'relay.perSecond'));
  out.set('outbox → bus → consumer end to end, events/s', at(results.events, 'endToEnd.perSecond'));
  return out;
}

function table(labels: string[], byRuntime: Record<string, Result>[]): string {
  const [before, after] = byRuntime.map(figures);
  const names = [...new Set([...before.keys(), ...after.keys()])];
  const lines = [`| figure | ${labels[0]} | ${labels[1]} | ratio |`, '|---|---|---|---|'];
  for (const name of names) {
    const [a, b] = [before.get(name), after.get(name)];
    if (a === undefined && b === undefined) continue;
    const ratio = a !== undefined && b !== undefined && a > 0 ? `${(b / a).toFixed(2)}×` : '';
    lines.push(`| ${name} | ${a ?? '–'} | ${b ?? '–'} | ${ratio} |`);
  }
  return lines.join('\n');
}

function main(): void {
  // This tree's engine-strict, handed down by `npm run`, would refuse on Node 20 the packages the
  // baseline installs, and the Hive Gateway peers the gateway bench installs (bench/ladder.ts).
  process.env.npm_config_engine_strict = 'false';
  const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const unknown = wanted.filter((name) => !(name in ARGS));
  if (unknown.length) throw new Error(`unknown bench ${unknown.join(', ')}; known: ${Object.keys(ARGS).join(', ')}`);
  const baselineArg = process.argv.find((arg) => arg.startsWith('--baseline='));
  // By default the commit this tree branched from main at: the same code before the move to Node 24.
  const baseline = baselineArg ? baselineArg.slice('--baseline='.length) : must('git', ['merge-base', 'HEAD', 'main']);
  const node20 = nodeDir(20);
  const node24 = Number(process.versions.node.split('.')[0]) === 24 ? path.dirname(path.dirname(process.execPath)) : nodeDir(24);
  const runtimes = [
    {
      label: `Node ${must(path.join(node20, 'bin', 'node'), ['--version'])} (${baseline.slice(0, 12)})`,
      node: path.join(node20, 'bin', 'node'),
      root: baselineTree(baseline, node20),
    },
    { label: `Node ${must(path.join(node24, 'bin', 'node'), ['--version'])} (this tree)`, node: path.join(node24, 'bin', 'node'), root },
  ];
  const results: Record<string, Result>[] = runtimes.map(() => ({}));
  for (const [name, args] of Object.entries(ARGS).filter(([name]) => wanted.length === 0 || wanted.includes(name))) {
    runtimes.forEach((runtime, i) => {
      process.stderr.write(`${runtime.label}: `);
      const result = run(name, { node: runtime.node, root: runtime.root, args });
      if (typeof result.error === 'string') process.stderr.write(`${name} failed on ${runtime.label}: ${result.error.slice(-600)}\n`);
      results[i][name] = result;
    });
  }
  const labels = runtimes.map(({ label }) => label);
  const markdown = table(labels, results);
  const date = new Date().toISOString().replace(/[:]/g, '-').slice(0, 19);
  const dir = path.join(root, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${date}-runtimes.json`), `${JSON.stringify({ date, runtimes: labels, args: ARGS, results }, null, 2)}\n`);
  fs.writeFileSync(path.join(dir, `${date}-runtimes.md`), `# Node 20 and Node 24 ${date}\n\n${markdown}\n`);
  process.stdout.write(`${markdown}\nWritten to bench/results/${date}-runtimes.json and .md\n`);
}

main();
