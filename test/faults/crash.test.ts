/**
 * An error nobody caught, in a real service process (platform/crash.ts): an unhandled rejection is
 * logged at error with the request id of the work that left it, and the process goes on serving; an
 * uncaught exception is logged at fatal with its request id, then the process stops gracefully and
 * exits 1. The book service runs from the TypeScript sources with a verifier that fails on purpose
 * (failing-book.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { dropDatabases, INTERNAL_KEY, waitFor } from '../harness';
import { spawnService, within, type ServiceProcess } from './process';

jest.setTimeout(90_000);

const FATAL = 60;
const ERROR = 50;

const id = randomBytes(4).toString('hex');
const env: Record<string, string> = {
  ...(process.env.DB_URL ? { DB_URL: process.env.DB_URL } : {}),
  ...(process.env.KAFKA_BROKERS ? { KAFKA_BROKERS: process.env.KAFKA_BROKERS } : {}),
  DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'bookstore-crash-')),
  DB_PREFIX: `t${id}_`,
  EVENT_NAMESPACE: `t${id}.`,
  INTERNAL_API_KEY: INTERNAL_KEY,
  LOG_LEVEL: 'info',
};

let book: ServiceProcess;

beforeAll(async () => {
  book = await spawnService('book', env, 60_000, { main: 'test/faults/failing-book' });
});
afterAll(async () => {
  book?.child.kill('SIGKILL');
  await dropDatabases({ dbUrl: process.env.DB_URL, dbPrefix: env.DB_PREFIX, dataDir: env.DATA_DIR }, ['book']);
});

/** The JSON log lines the process wrote so far. */
function logLines(): Record<string, unknown>[] {
  return book
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const createBook = (bearer: string, requestId: string) =>
  fetch(`${book.url}/api/books/create`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'x-request-id': requestId, 'content-type': 'application/json' },
    body: '{}',
  });

it('logs an unhandled rejection at error with its request id, and goes on serving', async () => {
  expect((await createBook('reject', `rejected-${id}`)).status).toBe(401);
  const line = await waitFor(() => logLines().find((entry) => entry.requestId === `rejected-${id}` && entry.level === ERROR), {
    what: 'the unhandled rejection logged',
  });
  expect(line).toMatchObject({ msg: 'unhandled promise rejection', err: { message: 'rejected and never awaited' } });
  expect((await fetch(`${book.url}/actuator/health`)).status).toBe(200);
  expect(book.child.exitCode).toBeNull();
});

it('logs an uncaught exception at fatal with its request id, then stops gracefully and exits 1', async () => {
  expect((await createBook('throw', `thrown-${id}`)).status).toBe(401);
  const { code } = await within(book.exited, 30_000, 'the process to exit');
  expect(code).toBe(1);
  const lines = logLines();
  const fatal = lines.findIndex((entry) => entry.requestId === `thrown-${id}` && entry.level === FATAL);
  expect(lines[fatal]).toMatchObject({ msg: 'uncaught exception; stopping the process', err: { message: 'thrown from a timer the request started' } });
  // Stopped as on SIGTERM: the service's own stop ran after the fatal line.
  expect(lines.slice(fatal).some((entry) => entry.msg === 'book service stopped')).toBe(true);
});
