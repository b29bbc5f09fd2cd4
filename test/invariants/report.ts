/** Runs a seed's workload and, when an invariant breaks, shrinks it and says how to see it again. */
import { generate, type GenerateOptions } from './generator';
import { describeAll } from './operations';
import { shrink } from './shrink';
import { runWorkload, type RunResult } from './workload';

export interface SeedOutcome {
  seed: number;
  operations: number;
  result: RunResult;
  /** Printable: the seed, the violations, and the shortest operation list found that still fails. */
  failure?: string;
}

export async function runSeed(
  seed: number,
  count: number,
  options: GenerateOptions & { shrink?: { maxAttempts?: number; deadline?: number }; deadline?: number } = {},
): Promise<SeedOutcome> {
  const workload = generate(seed, count, options);
  const result = await runWorkload(workload, workload.ops, { deadline: options.deadline });
  if (result.violations.length === 0) return { seed, operations: workload.ops.length, result };
  const invariants = [...new Set(result.violations.map((v) => v.invariant))];
  const lines = [
    `seed ${seed}: ${result.violations.length} violations of ${invariants.join(', ')}`,
    ...result.violations.slice(0, 20).map((v) => `  [${v.invariant}] ${v.detail}`),
  ];
  if (options.shrink) {
    const shrunk = await shrink(workload, invariants, options.shrink);
    lines.push(
      `shortest failing list found (${shrunk.ops.length} of ${workload.ops.length} ops, ${shrunk.attempts} attempts, breaks ${shrunk.invariants.join(', ')}):`,
      describeAll(shrunk.ops),
    );
  }
  return { seed, operations: workload.ops.length, result, failure: lines.join('\n') };
}
