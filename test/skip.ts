/**
 * The one place a test may be skipped: when the infrastructure it needs is not part of this run.
 * ESLint refuses `describe.skip`, `it.skip`, `xit` and the like everywhere else, so every skip in
 * the suite goes through here, names what would run it, and is counted by .ci/summary.js.
 */
/* eslint-disable no-restricted-properties, jest/no-disabled-tests -- the suite's reviewed, conditional skips */

/** `describe(title, body)` when `condition` holds; otherwise the block is skipped, its title saying what would run it. */
export function describeIf(condition: boolean, title: string, toRun: string, body: () => void): void {
  if (condition) describe(title, body);
  else describe.skip(`${title} (${toRun})`, body);
}

type TestFn = (title: string, fn: jest.ProvidesCallback, timeout?: number) => void;

/** `it` when `condition` holds; otherwise an `it` that skips its test, the title saying what would run it. */
export function itIf(condition: boolean, toRun: string): TestFn {
  if (condition) return it;
  return (title, fn, timeout) => it.skip(`${title} (${toRun})`, fn, timeout);
}
