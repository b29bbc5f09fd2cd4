/**
 * Live figures (docs/subscriptions.md, docs/performance.md#live-subscriptions): 1,000 readers of
 * the admin dashboard on one gateway process while payments land at a steady rate through the real
 * flow (checkout, the Stripe simulator confirms, its webhook, the outbox, Kafka, analytics). Three
 * ways side by side, each with the same readers and the same payments:
 * - our gateway's `dashboardUpdated` subscription over Server-Sent Events;
 * - Hive Gateway 2.15 serving a subscription from `@resolveTo(pubsubTopic)` over the local Redis,
 *   which this bench feeds: after each batch of the same events it reads the dashboard once from
 *   the analytics service (after analytics applied them) and publishes it;
 * - the same readers polling the dashboard query every 2 s through our gateway (no subscription).
 * For each: the delay from the webhook's answer to each reader's first sight of the payment (p50,
 * p99), the gateway's memory per open stream, its CPU per answer delivered, and the queries the
 * analytics service answered per event. The services and the payments run in this process, the
 * readers in one of their own (bench/live-readers.ts), each gateway in its own.
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import Redis from 'ioredis';
import { INTERNAL_KEY_HEADER } from '../platform/auth';
import { AFTER_EVENTS_HEADER, afterEventsHeader } from '../platform/events/after-events';
import type { Subscription } from '../platform/events/bus';
import { TOPICS } from '../platform/events/topics';
import { checkout, createBook } from '../test/commerce';
import { adminSession, registeredUser, startStack, type Stack } from '../test/stack';
import { percentile } from './measure';
import { startOurGateway, supergraphFor, type Services } from './peers';
import { freePort, groupCpuMs, groupRssBytes, ready, startGroup, stopGroup, type Started } from './processes';

const dist = path.join(__dirname, '..');
const root = path.join(dist, '..');

const READERS = Number(process.env.BENCH_LIVE_READERS ?? 1000);
/** Payments a second. */
const RATE = Number(process.env.BENCH_LIVE_RATE ?? 5);
const POLL_MS = 2000;
const DASHBOARD_TOPICS = [TOPICS.paymentCreated, TOPICS.paymentSuccess, TOPICS.paymentFailed, TOPICS.paymentRefunded, TOPICS.paymentRefundSucceeded];
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

const now = () => performance.timeOrigin + performance.now();
const round = (value: number, digits = 1) => Number(value.toFixed(digits));

interface Readers {
  child: ChildProcess;
  lines: string[];
  waitFor(line: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<{ seen: [number, number][]; answers: number }[]>;
}

function startReaders(options: { mode: 'sse' | 'poll'; url: string; headers: Record<string, string>; body: { query: string }; field: string }): Readers {
  const child = spawn(process.execPath, [path.join(dist, 'bench', 'live-readers.js'), JSON.stringify({ ...options, count: READERS, pollMs: POLL_MS })], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
  const waitFor = async (line: string, timeoutMs = 120_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!lines.includes(line)) {
      if (child.exitCode !== null) throw new Error(`the readers exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error(`the readers did not say ${line} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return {
    child,
    lines,
    waitFor,
    async stop() {
      child.stdin.write('stop\n');
      const deadline = Date.now() + 30_000;
      while (!lines.some((line) => line.startsWith('['))) {
        if (Date.now() > deadline) throw new Error('the readers did not report');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return JSON.parse(lines.find((line) => line.startsWith('['))!) as { seen: [number, number][]; answers: number }[];
    },
  };
}

/** POSTs to the analytics service's /graphql so far: what it answered for the gateways and the feeder. */
async function analyticsQueries(stack: Stack): Promise<number> {
  const text = await (await fetch(`${stack.urls.analytics}/actuator/prometheus`)).text();
  let sum = 0;
  for (const match of text.matchAll(/^http_server_requests_seconds_count\{([^}]*)\} (\d+)/gm)) {
    if (match[1].includes('method="POST"') && match[1].includes('route="unmatched"')) sum += Number(match[2]);
  }
  return sum;
}

async function paidOrders(stack: Stack, bearer: string): Promise<number> {
  const res = await fetch(`${stack.urls.analytics}/analytics/dashboard`, { headers: { authorization: bearer } });
  return ((await res.json()) as { paidOrders: number }).paidOrders;
}

interface PhaseResult {
  readers: number;
  payments: number;
  /** From the webhook's answer to each reader's first sight of the payment. */
  delayMs: { p50: number; p99: number; max: number };
  /** Of which: from the webhook's answer until analytics counted it (the same for every way of reading). */
  countedMs: { p50: number; p99: number };
  /** And from analytics counting it to each reader's sight: what the way of reading adds. */
  afterCountedMs: { p50: number; p99: number };
  /** Readers that never saw some payment (0 expected). */
  missed: number;
  memoryPerStreamKiB: number | undefined;
  cpuMsPerAnswer: number | undefined;
  gatewayCpuMsPerSecond: number | undefined;
  answers: number;
  analyticsQueriesPerEvent: number;
}

/**
 * One way of reading: `readers` connected to `gateway`, then `seconds` of payments at RATE a second,
 * then every reader's sight of every payment. `beforeReady` runs while the readers wait for their
 * first value (Hive's subscription has none until something is published).
 */
async function phase(
  stack: Stack,
  buyer: { bearer: string },
  bookId: string,
  admin: { bearer: string },
  gateway: Started,
  readerOptions: Parameters<typeof startReaders>[0],
  seconds: number,
  beforeReady?: () => Promise<void>,
): Promise<PhaseResult> {
  const rssBefore = groupRssBytes(gateway);
  const readers = startReaders(readerOptions);
  try {
    await readers.waitFor('connected');
    if (beforeReady) {
      const deadline = Date.now() + 60_000;
      while (!readers.lines.includes('ready') && Date.now() < deadline) {
        await beforeReady();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    await readers.waitFor('ready');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rssAfter = groupRssBytes(gateway);
    const base = await paidOrders(stack, admin.bearer);
    const cpuBefore = groupCpuMs(gateway);
    const queriesBefore = await analyticsQueries(stack);
    readers.child.stdin!.write('mark\n');

    const count = Math.max(1, Math.round(seconds * RATE));
    const began = now();
    const landed: number[] = [];
    // When analytics first showed each count, read every 25 ms.
    const counted = new Map<number, number>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const paid = await paidOrders(stack, admin.bearer);
        const at = now();
        for (let k = 1; k <= paid - base; k += 1) if (!counted.has(k)) counted.set(k, at);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const due = began + (i * 1000) / RATE;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - now())));
        const res = await checkout(stack, buyer.bearer, [{ bookId, quantity: 1 }]);
        if (res.status !== 200) throw new Error(`checkout answered ${res.status}: ${JSON.stringify(res.body)}`);
        await stack.stripe!.confirm(res.body.paymentIntentId as string);
        landed.push(now());
      }),
    );
    // Until analytics has counted every payment, then long enough for a poll to come round.
    while (counted.size < count) await new Promise((resolve) => setTimeout(resolve, 50));
    watching = false;
    await watch;
    await new Promise((resolve) => setTimeout(resolve, readerOptions.mode === 'poll' ? POLL_MS + 1000 : 2000));
    const elapsedS = (now() - began) / 1000;
    const cpuAfter = groupCpuMs(gateway);
    const queriesAfter = await analyticsQueries(stack);
    const report = await readers.stop();

    // The k-th payment to land made paidOrders base + k: a reader saw it at its first value at least that.
    landed.sort((a, b) => a - b);
    const delays: number[] = [];
    const after: number[] = [];
    const countedDelays = Array.from({ length: count }, (_, i) => Math.max(0, counted.get(i + 1)! - landed[i]));
    let missed = 0;
    let answers = 0;
    for (const reader of report) {
      answers += reader.answers;
      for (let k = 1; k <= count; k += 1) {
        const sight = reader.seen.find(([, paid]) => paid >= base + k);
        if (!sight) missed += 1;
        else {
          delays.push(Math.max(0, sight[0] - landed[k - 1]));
          after.push(Math.max(0, sight[0] - counted.get(k)!));
        }
      }
    }
    const delivered = answers;
    const cpu = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
    return {
      readers: report.length,
      payments: count,
      delayMs: { p50: round(percentile(delays, 50)), p99: round(percentile(delays, 99)), max: round(percentile(delays, 100)) },
      countedMs: { p50: round(percentile(countedDelays, 50)), p99: round(percentile(countedDelays, 99)) },
      afterCountedMs: { p50: round(percentile(after, 50)), p99: round(percentile(after, 99)) },
      missed,
      memoryPerStreamKiB: rssBefore !== undefined && rssAfter !== undefined ? round((rssAfter - rssBefore) / 1024 / READERS) : undefined,
      cpuMsPerAnswer: cpu !== undefined && delivered > 0 ? round(cpu / delivered, 3) : undefined,
      gatewayCpuMsPerSecond: cpu !== undefined ? round(cpu / elapsedS) : undefined,
      answers: delivered,
      // Each payment is two events the dashboard follows: payment-created at checkout, payment-success.
      analyticsQueriesPerEvent: round((queriesAfter - queriesBefore) / (2 * count), 2),
    };
  } finally {
    if (readers.child.exitCode === null) readers.child.kill();
  }
}

/**
 * Feeds Hive Gateway's Redis topic as an event-driven service would: after each batch of the events
 * the dashboard follows, the dashboard read once from analytics (once it has applied them) and published.
 */
async function feedRedis(stack: Stack, admin: { bearer: string }, redis: Redis, prefix: string): Promise<{ publishNow(): Promise<void>; stop(): Promise<void> }> {
  const publishAfter = async (after: { topic: string; eventId: string }[]) => {
    const headers: Record<string, string> = { authorization: admin.bearer, 'content-type': 'application/json' };
    if (after.length > 0) {
      headers[AFTER_EVENTS_HEADER] = afterEventsHeader(after);
      headers[INTERNAL_KEY_HEADER] = stack.config.internalApiKey;
    }
    const res = await fetch(`${stack.urls.analytics}/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: '{ dashboard { paidOrders totalRevenue totalOrders } }' }),
    });
    const body = (await res.json()) as { data?: { dashboard: unknown } };
    if (body.data) await redis.publish(`${prefix}:dashboard`, JSON.stringify(body.data.dashboard));
  };
  const subscription: Subscription = await stack.bus.subscribe({
    groupId: `bench-feeder.${randomUUID()}`,
    topics: DASHBOARD_TOPICS,
    fromBeginning: false,
    handleBatch: async (messages) => {
      const after = messages.map((message) => ({ topic: message.topic, eventId: (JSON.parse(message.value) as { eventId: string }).eventId }));
      await publishAfter(after);
    },
  });
  return { publishNow: () => publishAfter([]), stop: () => subscription.stop() };
}

async function startHive(services: Services, port: number, dir: string, prefix: string): Promise<Started> {
  const bin = path.join(root, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js');
  const config = path.join(root, 'bench', 'hive-gateway-live.config.mjs');
  const started = startGroup(
    'Hive Gateway',
    process.execPath,
    [bin, '--fork', '1', '-c', config, 'supergraph', supergraphFor(services, dir, port), '--host', '127.0.0.1', '--port', String(port)],
    { NODE_ENV: 'production', BENCH_REDIS_URL: REDIS_URL, BENCH_REDIS_PREFIX: prefix },
  );
  await ready(started, async () => {
    const res = await fetch(`http://127.0.0.1:${port}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
    return res.status === 200;
  });
  return started;
}

function table(results: Record<string, PhaseResult>): string {
  const rows = [
    '| readers of the dashboard | webhook → reader p50 / p99 (ms) | of which webhook → counted p50 / p99 | counted → reader p50 / p99 | missed | memory per stream (KiB) | gateway CPU per answer (ms) | gateway CPU (ms/s) | analytics queries per event |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, r] of Object.entries(results)) {
    rows.push(
      `| ${name} | ${r.delayMs.p50} / ${r.delayMs.p99} | ${r.countedMs.p50} / ${r.countedMs.p99} | ${r.afterCountedMs.p50} / ${r.afterCountedMs.p99} | ${r.missed} | ${r.memoryPerStreamKiB ?? 'n/a'} | ${r.cpuMsPerAnswer ?? 'n/a'} | ${r.gatewayCpuMsPerSecond ?? 'n/a'} | ${r.analyticsQueriesPerEvent} |`,
    );
  }
  return rows.join('\n');
}

export async function subscriptionsBench(seconds = 10) {
  if (!process.env.KAFKA_BROKERS) throw new Error('the live-figures bench needs KAFKA_BROKERS: its gateways are processes of their own (npm run bench starts the broker)');
  const internalApiKey = randomBytes(16).toString('hex');
  const stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'], env: { LOG_LEVEL: 'error', INTERNAL_API_KEY: internalApiKey } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-live-'));
  const redis = new Redis(REDIS_URL);
  const prefix = `bench-live-${randomBytes(4).toString('hex')}`;
  const results: Record<string, PhaseResult> = {};
  let gateway: Started | undefined;
  try {
    const admin = await adminSession(stack);
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, admin.bearer, 'Live bench', 9.5, 1_000_000);
    const services: Services = { urls: stack.urls, authorization: admin.bearer };
    const subscription = { query: 'subscription { dashboardUpdated { paidOrders totalRevenue totalOrders } }' };

    const port = await freePort();
    gateway = await startOurGateway(services, port, [], true, {
      INTERNAL_API_KEY: internalApiKey,
      PAYMENT_URL: stack.urls.payment,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS,
      EVENT_NAMESPACE: stack.config.eventNamespace,
      GATEWAY_SUBSCRIPTIONS_PER_CALLER: String(READERS),
      GATEWAY_SUBSCRIPTIONS_MAX: String(READERS * 2),
    });
    const ours = `http://127.0.0.1:${port}/graphql`;
    const headers = { authorization: admin.bearer };
    results['our gateway, subscription (SSE)'] = await phase(
      stack,
      buyer,
      book.id,
      admin,
      gateway,
      { mode: 'sse', url: ours, headers, body: subscription, field: 'dashboardUpdated' },
      seconds,
    );
    results['our gateway, polling every 2 s'] = await phase(
      stack,
      buyer,
      book.id,
      admin,
      gateway,
      { mode: 'poll', url: ours, headers, body: { query: '{ dashboard { paidOrders totalRevenue totalOrders } }' }, field: 'dashboard' },
      seconds,
    );
    await stopGroup(gateway);

    const feeder = await feedRedis(stack, admin, redis, prefix);
    try {
      const hivePort = await freePort();
      gateway = await startHive(services, hivePort, dir, prefix);
      results['Hive Gateway 2.15, @resolveTo(pubsubTopic) over Redis (SSE)'] = await phase(
        stack,
        buyer,
        book.id,
        admin,
        gateway,
        {
          mode: 'sse',
          url: `http://127.0.0.1:${hivePort}/graphql`,
          headers,
          body: { query: 'subscription { dashboardFeed { paidOrders totalRevenue totalOrders } }' },
          field: 'dashboardFeed',
        },
        seconds,
        // Its subscription has no current value: the feeder publishes the dashboard until every reader has one.
        async () => {
          await feeder.publishNow();
        },
      );
    } finally {
      await feeder.stop();
    }
    return {
      bench: 'subscriptions',
      readers: READERS,
      paymentsPerSecond: RATE,
      seconds,
      bus: stack.bus.kind,
      database: stack.config.dbUrl ? 'mysql' : 'sqlite',
      table: table(results),
      results,
    };
  } finally {
    if (gateway) await stopGroup(gateway);
    redis.disconnect();
    await stack.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  subscriptionsBench(Number(process.argv[2]) || undefined).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
