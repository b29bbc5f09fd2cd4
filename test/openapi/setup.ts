/**
 * Runs in every test file (setupFilesAfterEnv): every answer a test receives through supertest from a
 * service or the gateway (any server on the loopback) is checked against rest-compat/openapi.yaml
 * before the test sees it. A violation rejects that request with the reason (method, path, status,
 * ajv's errors) and fails the test in afterEach even if the test swallowed the rejection.
 */
import { Test } from 'supertest';
import type { Response } from 'supertest';
import { NOT_UNDER_CONTRACT } from './exempt';
import { CONTRACT_GLOBAL, type SandboxContract } from './shared';

const contract = (globalThis as Record<string, unknown>)[CONTRACT_GLOBAL] as SandboxContract | undefined;
if (!contract) throw new Error(`the OpenAPI response checker is missing: jest.config.js must use test/openapi/environment.ts as testEnvironment`);

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

type EndCallback = (error: unknown, res: Response) => void;
interface TestInternals {
  url: string;
  method: string;
}

const violations: string[] = [];

function violationOf(test: TestInternals, res: Response): string | undefined {
  if ((test as unknown as Record<symbol, unknown>)[NOT_UNDER_CONTRACT] !== undefined) {
    contract?.exempt();
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(test.url);
  } catch {
    return undefined;
  }
  if (!LOOPBACK.has(url.hostname)) return undefined;
  return contract?.check({
    method: test.method,
    path: url.pathname,
    status: res.status,
    contentType: res.headers['content-type'],
    body: res.body as unknown,
    text: typeof res.text === 'string' ? res.text : undefined,
  });
}

const originalEnd = Test.prototype.end as (this: Test, fn?: EndCallback) => Test;
Test.prototype.end = function end(this: Test, fn?: EndCallback) {
  return originalEnd.call(this, (error, res) => {
    const violation = res ? violationOf(this, res) : undefined;
    if (violation) violations.push(violation);
    fn?.(error ?? (violation ? new Error(violation) : undefined), res);
  });
} as typeof Test.prototype.end;

/** The violations not yet reported, which are then forgotten: for the checker's own test. */
export function takeViolations(): string[] {
  return violations.splice(0);
}

function reportViolations(): void {
  if (violations.length === 0) return;
  const reported = violations.splice(0);
  contract?.violated(reported.length);
  throw new Error(`${reported.length} answer(s) broke the OpenAPI contract (rest-compat/openapi.yaml):\n\n${reported.join('\n\n')}`);
}

afterEach(reportViolations);
afterAll(reportViolations);
