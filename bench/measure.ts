/** Timing helpers shared by the benchmarks: latencies of sequential calls and percentiles. */

/** Runs `call` `warmup` times untimed, then `count` times, and returns each timed call's milliseconds. */
export async function latencies(count: number, warmup: number, call: () => Promise<void>): Promise<number[]> {
  for (let i = 0; i < warmup; i += 1) await call();
  const times: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const began = performance.now();
    await call();
    times.push(performance.now() - began);
  }
  return times;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}
