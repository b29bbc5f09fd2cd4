/**
 * What the fuzz and security suites share: the whole system (every service and the gateway with its
 * GraphQL half) on port 0, a log kept in memory to read afterwards, raw HTTP requests sent exactly as
 * given (from a chosen loopback address if need be), and the contract's checks on any answer.
 */
import http from 'node:http';
import { graphqlHalf } from '../gateway/graphql';
import { createLogger, type Logger } from '../platform/logger';
import { startGateway, type RunningGateway } from './gateway';
import { expectEnvelope } from './harness';
import { startStack, type Stack } from './stack';

export interface LogCapture {
  logger: Logger;
  /** Every line written so far, as pino wrote it (JSON). */
  readonly lines: string[];
  /** The parsed lines at `level` or above (pino numbers: 40 warn, 50 error, 60 fatal). */
  entriesAtLeast(level: number): Record<string, unknown>[];
}

/** A pino logger whose lines stay in memory, so a test can read what the system logged. */
export function captureLog(level: string): LogCapture {
  const lines: string[] = [];
  const logger = createLogger(level, {}, { write: (line: string) => void lines.push(line) });
  return {
    logger,
    lines,
    entriesAtLeast: (minimum) => lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => Number(entry.level) >= minimum),
  };
}

export interface System {
  stack: Stack;
  gateway: RunningGateway;
  /** The gateway's base URL: every request of these suites goes through it. */
  url: string;
  stop(): Promise<void>;
}

/** Every service, the Stripe simulator and the gateway with /graphql, all logging to `logger`. */
export async function startSystem(options: { env?: Record<string, string>; logger?: Logger } = {}): Promise<System> {
  const stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'], env: options.env, logger: options.logger });
  const logger = options.logger ?? createLogger(stack.config.logLevel);
  let gateway: RunningGateway;
  try {
    gateway = await startGateway(stack.config, { logger, mountGraphql: graphqlHalf({ config: stack.config, logger }) });
  } catch (error) {
    await stack.stop();
    throw error;
  }
  return {
    stack,
    gateway,
    url: gateway.url,
    stop: async () => {
      await gateway.stop();
      await stack.stop();
    },
  };
}

export interface Outgoing {
  method: string;
  /** The request target exactly as sent: path and query, already encoded. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The client's own address, e.g. 127.0.0.2, to be another client than 127.0.0.1. */
  localAddress?: string;
  agent?: http.Agent;
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: unknown;
}

/** One request with nothing normalised on the way (supertest would fix paths and headers). */
export function send(baseUrl: string, outgoing: Outgoing): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: hostname, port, method: outgoing.method, path: outgoing.path, headers: outgoing.headers, localAddress: outgoing.localAddress, agent: outgoing.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          if (/json/.test(res.headers['content-type'] ?? '')) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(outgoing.body);
  });
}

/** What an answer shows of itself in a failure message. */
export function show(answer: Answer): string {
  return `${answer.status} ${answer.headers['content-type'] ?? ''} ${answer.text.slice(0, 500)}`;
}

/** Stack frames, source paths and error internals that no answer may carry. */
const INTERNALS = [
  /\n\s+at [^\n]+:\d+:\d+/,
  /node_modules/,
  /\/work\//,
  /\bstacktrace\b/i,
  /QueryFailedError|SQLITE_|\bER_[A-Z]|TypeError|RangeError|ReferenceError/,
  /Maximum call stack/,
];

export function expectNoInternals(answer: Answer): void {
  for (const pattern of INTERNALS) {
    if (pattern.test(answer.text)) throw new Error(`answer shows internals (${pattern}): ${show(answer)}`);
  }
}

/** Every REST answer to hostile input: no 5xx, the envelope on every error, no internals. */
export function expectSaneRest(answer: Answer): void {
  if (answer.status >= 500) throw new Error(`a 5xx answer: ${show(answer)}`);
  if (answer.status >= 400) expectEnvelope(answer);
  expectNoInternals(answer);
}

/**
 * Every GraphQL answer to hostile input: no 5xx; a GraphQL body (or the envelope, for a request the
 * gateway refuses before GraphQL, e.g. an undecodable body); no INTERNAL_SERVER_ERROR; no internals.
 */
export function expectSaneGraphql(answer: Answer): void {
  if (answer.status >= 500) throw new Error(`a 5xx answer: ${show(answer)}`);
  expectNoInternals(answer);
  const body = answer.json as { errors?: { message?: unknown; extensions?: { code?: unknown } }[]; data?: unknown; status?: unknown } | undefined;
  if (!body || typeof body !== 'object') throw new Error(`not a JSON answer: ${show(answer)}`);
  if ('timestamp' in body) {
    expectEnvelope(answer);
    return;
  }
  if (!('errors' in body) && !('data' in body)) throw new Error(`neither data nor errors: ${show(answer)}`);
  if (answer.status >= 400 && !Array.isArray(body.errors)) throw new Error(`a ${answer.status} without errors: ${show(answer)}`);
  for (const error of body.errors ?? []) {
    if (typeof error.message !== 'string') throw new Error(`an error without a message: ${show(answer)}`);
    if (error.extensions?.code === 'INTERNAL_SERVER_ERROR') throw new Error(`an internal error: ${show(answer)}`);
  }
}
