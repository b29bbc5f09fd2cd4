/** One run: a fresh world, the operations wave by wave, then the invariants once it has settled. */
import { settleAndCheck, type CheckResult } from './checker';
import type { Workload } from './generator';
import type { Operation } from './operations';
import { runOperations } from './runner';
import type { GroundTruth } from './truth';
import { startWorld } from './world';

export interface RunResult extends CheckResult {
  ran: number;
  durationMs: number;
  truth: GroundTruth;
}

export async function runWorkload(workload: Workload, ops: readonly Operation[] = workload.ops, options: { deadline?: number; settleMs?: number } = {}): Promise<RunResult> {
  const started = Date.now();
  const world = await startWorld(workload);
  try {
    const ran = await runOperations(world, ops, options.deadline);
    const result = await settleAndCheck(world, options.settleMs);
    return { ...result, ran, durationMs: Date.now() - started, truth: world.truth };
  } finally {
    await world.stop();
  }
}
