/**
 * npm run soak -- [--minutes 10] [--seed 42] [--ops 400] [--shrink]: runs the invariants workload
 * (test/invariants) seed after seed until the time is up, on MariaDB + Kafka when DB_URL and
 * KAFKA_BROKERS are set, and writes a JSON and a Markdown report under .tmp/soak/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runConfig } from '../test/stack';
import { runSeed, type SeedOutcome } from '../test/invariants/report';

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
}

async function main(): Promise<void> {
  const minutes = Number(option('minutes') ?? 10);
  const firstSeed = Number(option('seed') ?? Math.floor(Math.random() * 2 ** 31));
  const ops = Number(option('ops') ?? 400);
  const full = Boolean(runConfig.dbUrl && runConfig.kafkaBrokers);
  const started = Date.now();
  const deadline = started + minutes * 60_000;
  const runs: SeedOutcome[] = [];
  for (let seed = firstSeed; Date.now() < deadline; seed += 1) {
    const outcome = await runSeed(seed, ops, {
      restarts: full,
      deadline,
      shrink: process.argv.includes('--shrink') ? { maxAttempts: Number(option('shrink-attempts') ?? 40), deadline: Date.now() + 15 * 60_000 } : undefined,
    });
    runs.push(outcome);
    process.stdout.write(`seed ${seed}: ${outcome.result.ran} ops in ${outcome.result.durationMs} ms, ${outcome.failure ? 'FAILED' : 'held'}\n`);
    if (outcome.failure) process.stdout.write(`${outcome.failure}\n`);
  }
  const sum = (pick: (run: SeedOutcome) => Record<string, number>) =>
    runs.reduce<Record<string, number>>((total, run) => {
      for (const [key, value] of Object.entries(pick(run))) total[key] = (total[key] ?? 0) + value;
      return total;
    }, {});
  const report = {
    firstSeed,
    setup: full ? 'MariaDB + Kafka' : 'SQLite + in-process bus',
    durationMs: Date.now() - started,
    runs: runs.map((run) => ({ seed: run.seed, ran: run.result.ran, durationMs: run.result.durationMs, violations: run.result.violations, failure: run.failure })),
    answers: sum((run) => Object.fromEntries(run.result.truth.answers)),
    faults: sum((run) => run.result.truth.faults),
    stock: sum((run) => run.result.truth.stock),
    invariantsChecked: sum((run) => run.result.checked),
    invariantsBroken: sum((run) => Object.fromEntries(run.result.violations.map((v) => [v.invariant, 1]))),
  };
  const dir = path.join('.tmp', 'soak');
  fs.mkdirSync(dir, { recursive: true });
  const stamp = new Date(started).toISOString().replace(/[:.]/g, '-');
  fs.writeFileSync(path.join(dir, `soak-${stamp}.json`), JSON.stringify(report, null, 2));
  const table = (rows: Record<string, number>) =>
    Object.entries(rows)
      .map(([key, value]) => `| ${key} | ${value} |`)
      .join('\n');
  const markdown = [
    `# Soak ${stamp}`,
    `${report.setup}, seeds ${firstSeed}..${firstSeed + runs.length - 1}, ${runs.length} runs, ${Math.round(report.durationMs / 1000)} s, ${runs.filter((r) => r.failure).length} failed.`,
    `## Operations by kind and answer\n\n| op answer | count |\n|---|---|\n${table(report.answers)}`,
    `## Faults injected\n\n| fault | count |\n|---|---|\n${table(report.faults)}`,
    `## Stock under load\n\n| what | count |\n|---|---|\n${table(report.stock)}`,
    `## Invariants checked (instances) and runs that broke them\n\n| invariant | checked |\n|---|---|\n${table(report.invariantsChecked)}`,
    `| invariant | runs broken |\n|---|---|\n${table(report.invariantsBroken)}`,
    ...runs.filter((r) => r.failure).map((r) => `## Seed ${r.seed}\n\n\`\`\`\n${r.failure}\n\`\`\``),
  ].join('\n\n');
  fs.writeFileSync(path.join(dir, `soak-${stamp}.md`), `${markdown}\n`);
  process.stdout.write(`report: ${dir}/soak-${stamp}.md\n`);
  process.exitCode = runs.some((r) => r.failure) ? 1 : 0;
}

void main();
