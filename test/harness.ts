/** What test files import: the stack of real services, waiting, and the contract's error envelope. */
import { STATUS_CODES } from 'node:http';
import { VALIDATION_FAILED } from '../platform/errors';
import { adminSession, startStack, type Stack, type StackOptions } from './stack';

export * from './stack';
export { waitFor } from './wait';
export { notUnderContract } from './openapi/exempt';

/** The contract's timestamps: UTC to the millisecond, without a zone. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The message of every 401 for a missing or refused access token. */
export const AUTHENTICATION_REQUIRED = 'Authentication is required to access this resource';

/** An answer as supertest gives it (`body`), or as test/hostile.ts's raw `send` does (`json`). */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text?: string;
  body?: unknown;
  json?: unknown;
}

/**
 * Asserts the contract's error envelope (CONTRACT §1.1): JSON with exactly its six fields, the status
 * and its reason phrase, a timestamp to the millisecond, a message, the path, and validationErrors
 * ("field: problem" lines) on a validation failure, null otherwise. With `status` and `message`, also
 * that the answer has them. A plain throw on failure, so fast-check properties can use it too.
 */
export function expectEnvelope(reply: Reply, status?: number, message?: string | RegExp): void {
  if (status !== undefined) expect(reply.status).toBe(status);
  const body = ('body' in reply ? reply.body : reply.json) as Record<string, unknown> | undefined;
  const fail = (why: string) => {
    throw new Error(`not the error envelope (${why}): ${reply.status} ${String(reply.headers['content-type'] ?? '')} ${(reply.text ?? JSON.stringify(body) ?? '').slice(0, 500)}`);
  };
  if (!/^application\/json/.test(String(reply.headers['content-type'] ?? ''))) fail('content type');
  if (!body || typeof body !== 'object' || Array.isArray(body)) return fail('body');
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'error,message,path,status,timestamp,validationErrors') fail(`keys ${keys}`);
  if (body.status !== reply.status) fail('status field');
  if (body.error !== STATUS_CODES[reply.status]) fail('reason phrase');
  if (typeof body.timestamp !== 'string' || !TIMESTAMP.test(body.timestamp)) fail('timestamp');
  if (typeof body.message !== 'string' || body.message === '') fail('message');
  if (typeof body.path !== 'string' || !body.path.startsWith('/')) fail('path');
  const errors = body.validationErrors;
  if (body.message === VALIDATION_FAILED) {
    if (!Array.isArray(errors) || errors.length === 0 || !errors.every((line) => typeof line === 'string' && /^[^:]+: .+/s.test(line))) fail('validationErrors');
  } else if (errors !== null) {
    fail('validationErrors should be null');
  }
  if (typeof message === 'string') expect(body.message).toBe(message);
  else if (message !== undefined) expect(body.message).toMatch(message);
}

/** What a test file's tests share of the stack started around them: set once they run. */
export class StackSuite {
  stack!: Stack;
  admin!: Awaited<ReturnType<typeof adminSession>>;
}

/**
 * Starts a stack with an admin session before the calling file's tests (then `prepare`, for what the
 * file needs besides) and stops it after them.
 */
export function stackSuite<T extends StackSuite>(suite: T, options: StackOptions = {}, prepare?: (suite: T) => Promise<void>): T {
  beforeAll(async () => {
    suite.stack = await startStack(options);
    suite.admin = await adminSession(suite.stack);
    await prepare?.(suite);
  });
  afterAll(async () => {
    await suite.stack?.stop();
  });
  return suite;
}
