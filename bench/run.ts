/**
 * `npm run bench`: runs each benchmark in its own process, one after the other so they do not
 * compete for the two cores, and writes bench/results/<date>.json and a Markdown table beside it.
 * `npm run bench -- analytics commerce` runs only those. Nothing here asserts a figure.
 */
import fs from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

export const BENCHES: Record<string, string[]> = {
  events: ['20000'],
  commerce: ['10'],
  'forgot-password': ['1000'],
  gateway: [process.env.BENCH_SECONDS ?? '10'],
  cores: [process.env.BENCH_SECONDS ?? '10'],
  tracing: [process.env.BENCH_SECONDS ?? '10'],
  usage: [process.env.BENCH_SECONDS ?? '10'],
  analytics: ['10000', '1000000'],
  catalogue: ['100', '10000,100000'],
  search: ['100000', '200', '50'],
  rush: ['1000', '50'],
  subscriptions: [process.env.BENCH_SECONDS ?? '10'],
};

export interface BenchRuntime {
  /** The node binary that runs the bench and every process it starts (default: this one). */
  node?: string;
  /** The built tree whose dist/bench holds the scripts (default: this one). */
  root?: string;
  /** The bench's arguments (default: BENCHES'). */
  args?: string[];
}

/** One bench in its own process; its last JSON line, with the wall time, or what went wrong. */
export function run(name: string, runtime: BenchRuntime = {}): Record<string, unknown> {
  const { node = process.execPath, root = path.resolve(__dirname, '..', '..'), args = BENCHES[name] } = runtime;
  const script = path.join(root, 'dist', 'bench', `${name}.js`);
  if (!fs.existsSync(script)) return { bench: name, error: 'not built' };
  process.stderr.write(`bench ${name} ...\n`);
  const began = Date.now();
  // Its node first on PATH too, for anything the bench starts by name.
  const env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` };
  const child = spawnSync(node, [script, ...args], { cwd: root, encoding: 'utf8', env, timeout: 20 * 60_000, maxBuffer: 64 * 1024 * 1024 });
  const line = child.stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  if (child.status !== 0 || !line) return { bench: name, error: (child.stderr || child.error?.message || 'no output').slice(-2000) };
  return { ...(JSON.parse(line) as Record<string, unknown>), wallSeconds: Math.round((Date.now() - began) / 1000) };
}

function markdown(results: Record<string, unknown>[], meta: { date: string; cpus: number; node: string; database: string; bus: string }): string {
  const lines = [`# Benchmarks ${meta.date}`, '', `Machine: ${meta.cpus} cores, Node ${meta.node}; database ${meta.database}, bus ${meta.bus}.`, ''];
  for (const result of results) {
    lines.push(`## ${String(result.bench)}`, '');
    // A benchmark that lays out its own table (the gateway's) is shown as it wrote it, figures below.
    if (typeof result.table === 'string') lines.push(result.table, '');
    lines.push('| figure | value |', '|---|---|');
    const flatten = (prefix: string, value: unknown): void => {
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const [key, inner] of Object.entries(value)) flatten(prefix ? `${prefix}.${key}` : key, inner);
      } else if (prefix !== 'bench' && prefix !== 'table') {
        lines.push(`| ${prefix} | ${typeof value === 'string' ? value.replace(/\n/g, ' ').slice(0, 300) : JSON.stringify(value)} |`);
      }
    };
    flatten('', result);
    lines.push('');
  }
  return lines.join('\n');
}

function main(): void {
  const wanted = process.argv.slice(2);
  const names = wanted.length ? wanted : Object.keys(BENCHES);
  const unknown = names.filter((name) => !BENCHES[name]);
  if (unknown.length) throw new Error(`unknown bench ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  const results = names.map((name) => run(name));
  const date = new Date().toISOString().replace(/[:]/g, '-').slice(0, 19);
  const meta = {
    date,
    cpus: cpus().length,
    node: process.version,
    database: process.env.DB_URL ? 'MySQL/MariaDB' : 'SQLite',
    bus: process.env.KAFKA_BROKERS ? 'Kafka' : 'in-process',
  };
  const dir = path.resolve('bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${date}.json`), `${JSON.stringify({ ...meta, results }, null, 2)}\n`);
  const table = markdown(results, meta);
  fs.writeFileSync(path.join(dir, `${date}.md`), `${table}\n`);
  process.stdout.write(`${table}\nWritten to bench/results/${date}.json and .md\n`);
}

if (require.main === module) main();
