/**
 * Delta debugging (ddmin, coarsely): re-runs the workload on a fresh world with chunks of the
 * operation list removed, keeping any smaller list that still breaks one of the same invariants,
 * until no chunk can go or the attempts or time run out.
 */
import type { Workload } from './generator';
import type { Operation } from './operations';
import { runWorkload } from './workload';

export interface ShrinkResult {
  ops: Operation[];
  attempts: number;
  invariants: string[];
}

export async function shrink(workload: Workload, failing: readonly string[], options: { maxAttempts?: number; deadline?: number } = {}): Promise<ShrinkResult> {
  const maxAttempts = options.maxAttempts ?? 30;
  const deadline = options.deadline ?? Date.now() + 5 * 60_000;
  let ops = [...workload.ops];
  let invariants = [...failing];
  let attempts = 0;
  const stillFails = async (candidate: Operation[]) => {
    attempts += 1;
    const result = await runWorkload(workload, candidate, { settleMs: 10_000 });
    const broken = [...new Set(result.violations.map((v) => v.invariant))].filter((name) => failing.includes(name));
    if (broken.length > 0) invariants = broken;
    return broken.length > 0;
  };
  let chunks = 2;
  while (ops.length > 1 && attempts < maxAttempts && Date.now() < deadline) {
    const size = Math.ceil(ops.length / chunks);
    let removed = false;
    for (let start = 0; start < ops.length && attempts < maxAttempts && Date.now() < deadline; start += size) {
      const candidate = [...ops.slice(0, start), ...ops.slice(start + size)];
      if (await stillFails(candidate)) {
        ops = candidate;
        chunks = Math.max(chunks - 1, 2);
        removed = true;
        break;
      }
    }
    if (!removed) {
      if (size === 1) break;
      chunks = Math.min(chunks * 2, ops.length);
    }
  }
  return { ops, attempts, invariants };
}
