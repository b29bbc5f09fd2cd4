/**
 * Starts real services on port 0 for a test file: MariaDB/MySQL when DB_URL is set (throwaway
 * databases, dropped afterwards), SQLite in a temp folder otherwise; Kafka when KAFKA_BROKERS is
 * set (topics and groups under a unique namespace), the in-process bus otherwise.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { loadConfig, type Config, type ServiceName } from '../platform/config';
import { databaseName } from '../platform/database';
import type { EventBus } from '../platform/events/bus';
import { createEventBus } from '../platform/events/create-bus';
import { namespacedBus } from '../platform/events/namespaced-bus';
import { createLogger } from '../platform/logger';
import type { BookstoreService } from '../platform/service';
import { createAuthService } from '../subgraphs/auth';
import { createUserService } from '../subgraphs/user';

export const INTERNAL_KEY = 'test-internal-key';

export interface Stack {
  config: Config;
  bus: EventBus;
  auth: Awaited<ReturnType<typeof createAuthService>>;
  user: BookstoreService;
  urls: Record<'auth' | 'user', string>;
  admin: { email: string; password: string };
  stop(): Promise<void>;
}

export function testConfig(env: Record<string, string> = {}): Config {
  const id = randomBytes(4).toString('hex');
  return loadConfig({
    DB_URL: process.env.DB_URL,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    LOG_LEVEL: process.env.LOG_LEVEL,
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'bookstore-test-')),
    DB_PREFIX: `t${id}_`,
    EVENT_NAMESPACE: `t${id}.`,
    INTERNAL_API_KEY: INTERNAL_KEY,
    AUTH_RATE_LIMIT_MAX: '100000',
    BOOTSTRAP_ADMIN_EMAIL: `admin-${id}@bookstore.test`,
    BOOTSTRAP_ADMIN_PASSWORD: 'AdminPass123',
    ...env,
  });
}

async function dropDatabases(config: Config, services: ServiceName[]): Promise<void> {
  if (config.dbUrl) {
    const mysql = await import('mysql2/promise');
    const connection = await mysql.createConnection({ uri: config.dbUrl });
    try {
      for (const service of services) await connection.query(`DROP DATABASE IF EXISTS \`${databaseName({ service, config })}\``);
    } finally {
      await connection.end();
    }
  }
  fs.rmSync(config.dataDir, { recursive: true, force: true });
}

export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const config = testConfig(env);
  const logger = createLogger(config.logLevel);
  const bus = namespacedBus(createEventBus(config, logger), config.eventNamespace);
  const auth = await createAuthService({ config, logger, bus });
  const authPort = await auth.start(0, '127.0.0.1');
  config.urls.auth = `http://127.0.0.1:${authPort}`;
  const user = await createUserService({ config, logger, bus });
  const userPort = await user.start(0, '127.0.0.1');
  config.urls.user = `http://127.0.0.1:${userPort}`;
  await auth.bootstrapDone();
  return {
    config,
    bus,
    auth,
    user,
    urls: { auth: config.urls.auth, user: config.urls.user },
    admin: config.bootstrapAdmin as { email: string; password: string },
    async stop() {
      await Promise.allSettled([auth.stop(), user.stop()]);
      await bus.close();
      await dropDatabases(config, ['auth', 'user']);
    },
  };
}

let counter = 0;

/** A registration body that passes every rule, with a unique email. */
export function newUser(overrides: Record<string, unknown> = {}) {
  counter += 1;
  return {
    email: `reader${counter}-${randomBytes(3).toString('hex')}@example.com`,
    password: 'Secret123',
    firstName: 'Ada',
    lastName: 'Reader',
    phoneNumber: '+14155550100',
    dateOfBirth: '1990-05-17',
    address: '1 Library Lane, Springfield',
    ...overrides,
  };
}

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

export async function login(authUrl: string, email: string, password: string, deviceId = 'test-device'): Promise<Tokens> {
  const res = await request(authUrl).post('/auth/login').send({ email, password, deviceId });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Tokens;
}

/** Registers a fresh USER and logs in. */
export async function registeredUser(stack: Stack, overrides: Record<string, unknown> = {}) {
  const body = newUser(overrides);
  const res = await request(stack.urls.auth).post('/auth/register').send(body);
  if (res.status !== 200) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
  const tokens = await login(stack.urls.auth, body.email, body.password);
  return { ...body, userId: res.body.userId as string, tokens, bearer: `Bearer ${tokens.accessToken}` };
}

export async function adminSession(stack: Stack) {
  const tokens = await login(stack.urls.auth, stack.admin.email, stack.admin.password, 'admin-device');
  const payload = JSON.parse(Buffer.from(tokens.accessToken.split('.')[1], 'base64url').toString()) as { sub: string };
  return { tokens, userId: payload.sub, bearer: `Bearer ${tokens.accessToken}` };
}

/** Polls `condition` until it holds or `timeoutMs` passes. */
export async function waitFor(condition: () => Promise<boolean> | boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Asserts the contract's error envelope (CONTRACT §1.1). */
export function expectEnvelope(res: request.Response, status: number, message?: string | RegExp): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/application\/json/);
  expect(res.body).toEqual({
    timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/),
    status,
    error: expect.any(String),
    message: message === undefined ? expect.any(String) : typeof message === 'string' ? message : expect.stringMatching(message),
    path: expect.stringMatching(/^\//),
    validationErrors: status === 400 && res.body.message === 'Validation failed for one or more fields' ? expect.any(Array) : null,
  });
}
