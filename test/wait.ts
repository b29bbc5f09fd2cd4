/** Waiting in tests: poll a condition until it holds or a deadline passes, never a fixed sleep. */

export interface WaitOptions<T = unknown> {
  timeoutMs?: number;
  intervalMs?: number;
  /** Names the condition in the failure message. */
  what?: string;
  /** Whether a result is the one waited for (default: any truthy one); a refused result is the failure message's last value. */
  accept?: (value: T) => boolean;
}

/**
 * Resolves with the condition's first truthy result. On the deadline it rejects with the last
 * value or error seen, so a failing test says what it was waiting for and how far it got.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, timeoutMsOrOptions: number | WaitOptions<T> = {}): Promise<NonNullable<T>> {
  const options = typeof timeoutMsOrOptions === 'number' ? { timeoutMs: timeoutMsOrOptions } : timeoutMsOrOptions;
  const timeoutMs = options.timeoutMs ?? 20000;
  const intervalMs = options.intervalMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (options.accept ? options.accept(value) && value : value) return value as NonNullable<T>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'a condition'} (last: ${detail})`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
