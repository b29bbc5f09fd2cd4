/** What the OpenAPI environment, the test files' setup and the coverage script agree on; no side effects. */
import path from 'node:path';
import type { Answer } from './contract';

/** The name the checker goes by on the test files' global object. */
export const CONTRACT_GLOBAL = '__bookstoreResponseContract';

export interface SandboxContract {
  /** Undefined when the answer is what the document says; the violation's message otherwise. */
  check(answer: Answer): string | undefined;
  /** Counts an answer a test marked as not under the contract (a stub upstream's). */
  exempt(): void;
  /** Counts the violations that failed a test. */
  violated(count: number): void;
}

export interface CoverageTally {
  pid: number;
  /** Answers checked against a documented response (fallbacks included). */
  validated: number;
  /** Answers to non-REST paths (GraphQL, the Stripe simulator, /admin, /docs, /openapi.json). */
  exempt: number;
  /** Answers that broke the contract and failed their test. */
  violations: number;
  /** Per documented response (`GET /api/user/{id} 200`, `x-fallback unknownPath 404`): how many answers. */
  responses: Record<string, number>;
}

export function coverageDir(rootDir: string): string {
  return path.join(rootDir, '.tmp', 'openapi-coverage');
}
