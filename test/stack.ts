/**
 * Starts real services on port 0 for a test file or a benchmark: MariaDB/MySQL when DB_URL is set (throwaway
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
import { createLogger, type Logger } from '../platform/logger';
import type { BookstoreService } from '../rest-compat/service';
import { SERVICE_FACTORIES } from '../subgraphs';
import type { AuthServiceRuntime } from '../subgraphs/auth';
import { createStripeSimulator, type StripeSimulator } from '../simulators/stripe/simulator';
import { claimsOf } from './jwt';

export const INTERNAL_KEY = 'test-internal-key';

export interface Stack {
  config: Config;
  bus: EventBus;
  auth: AuthServiceRuntime;
  user: BookstoreService;
  services: Partial<Record<ServiceName, BookstoreService>>;
  /** Base URL of every started service. */
  urls: Record<ServiceName, string>;
  admin: { email: string; password: string };
  /** The Stripe simulator the payment service talks to, when the payment service runs. */
  stripe: StripeSimulator | undefined;
  stop(): Promise<void>;
}

export const WEBHOOK_SECRET = 'whsec_test_harness_secret';

/** DB_URL, KAFKA_BROKERS and LOG_LEVEL as the test run was given them, for a test to ask what it runs on. */
export const runConfig = loadConfig(process.env, { embedded: true });

/** A configuration of throwaway names: its own database prefix, event namespace, data folder and admin, on the run's infrastructure. */
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

/**
 * Drops the throwaway databases of `services` (on MariaDB; SQLite keeps them in the data folder) and
 * removes the data folder (SQLite files, keys, covers), unless `keepDataDir` because its owner still runs.
 */
export async function dropDatabases(config: Pick<Config, 'dbUrl' | 'dbPrefix' | 'dataDir'>, services: readonly string[], options: { keepDataDir?: boolean } = {}): Promise<void> {
  if (config.dbUrl && services.length > 0) {
    const mysql = await import('mysql2/promise');
    const connection = await mysql.createConnection({ uri: config.dbUrl });
    try {
      for (const service of services) await connection.query(`DROP DATABASE IF EXISTS \`${databaseName({ service, config })}\``);
    } finally {
      await connection.end();
    }
  }
  if (!options.keepDataDir) fs.rmSync(config.dataDir, { recursive: true, force: true });
}

export interface StackOptions {
  /** Services besides auth and user, which always run. */
  services?: ServiceName[];
  env?: Record<string, string>;
  /** Where the services log; default stdout at the config's LOG_LEVEL (tests that read the log hand their own). */
  logger?: Logger;
  /** Where the Stripe simulator sends its webhooks; default the payment service itself (a test may route them through a gateway, or hold them back with undefined). */
  stripeWebhookUrl?: () => string | undefined;
}

/** Starts auth, user and the requested services, in the start order of SERVICE_FACTORIES. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const config = testConfig(options.env);
  const logger = options.logger ?? createLogger(config.logLevel);
  const bus = namespacedBus(createEventBus(config, logger), config.eventNamespace);
  const wanted = new Set<ServiceName>(['auth', 'user', ...(options.services ?? [])]);
  const services: Partial<Record<ServiceName, BookstoreService>> = {};
  let stripe: StripeSimulator | undefined;
  const stopAll = async () => {
    await Promise.allSettled(Object.values(services).map((service) => service.stop()));
    await stripe?.stop();
    await bus.close();
    await dropDatabases(config, Object.keys(services));
  };
  try {
    if (wanted.has('payment')) {
      stripe = createStripeSimulator({ webhookUrl: options.stripeWebhookUrl ?? (() => `${config.urls.payment}/api/payments/webhook`), webhookSecret: WEBHOOK_SECRET, logger });
      const port = await stripe.start(0, '127.0.0.1');
      config.stripe = { ...config.stripe, secretKey: 'sk_test_harness', webhookSecret: WEBHOOK_SECRET, apiUrl: `http://127.0.0.1:${port}` };
    }
    for (const [name, build] of Object.entries(SERVICE_FACTORIES) as [ServiceName, NonNullable<(typeof SERVICE_FACTORIES)[ServiceName]>][]) {
      if (!wanted.has(name)) continue;
      const service = await build({ config, logger, bus });
      services[name] = service;
      const port = await service.start(0, '127.0.0.1');
      config.urls[name] = `http://127.0.0.1:${port}`;
    }
    const auth = services.auth as AuthServiceRuntime;
    await auth.bootstrapDone();
    return {
      config,
      bus,
      auth,
      user: services.user as BookstoreService,
      services,
      urls: config.urls,
      admin: config.bootstrapAdmin as { email: string; password: string },
      stripe,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
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
  return { tokens, userId: claimsOf(tokens.accessToken).sub as string, email: stack.admin.email, bearer: `Bearer ${tokens.accessToken}` };
}
