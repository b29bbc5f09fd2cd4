/**
 * Analytics at volume: events per second ingested from the bus into the aggregates (a backlog
 * drained by a fresh consumer, so the figure is ingestion alone), and the p50 of the dashboard and
 * revenue reads after 10,000 and after 1,000,000 events. Kafka and MySQL when KAFKA_BROKERS and
 * DB_URL are set. Build, then: node dist/bench/analytics.js [small=10000] [large=1000000].
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { ProcessedEvent, consumerGroupOf } from '../platform/events/consumer';
import type { BusMessage } from '../platform/events/bus';
import { TOPICS } from '../platform/events/topics';
import { createLogger } from '../platform/logger';
import { createAnalyticsService } from '../subgraphs/analytics';
import { adminSession, startStack, type Stack } from '../test/stack';
import { latencies, percentile } from './measure';

const BOOKS = Array.from({ length: 200 }, (_, i) => ({ id: randomUUID(), title: `Book ${i}` }));
const DAYS = 365;

/** `count` events: payments created then paid for `books`, spread over a year, a few failing. */
export function* paymentEvents(count: number, books: readonly { id: string; title: string }[] = BOOKS): Generator<BusMessage> {
  const start = Date.parse('2025-11-01T00:00:00Z');
  for (let i = 0; i < count; i += 2) {
    const paymentId = randomUUID();
    const occurredAt = new Date(start + (i % DAYS) * 86_400_000 + (i % 1000) * 1000).toISOString();
    const book = books[(i >> 1) % books.length];
    const items = [{ bookId: book.id, bookTitle: book.title, quantity: 1 + (i % 3), price: 12.99 }];
    const amount = Number((items[0].quantity * 12.99).toFixed(2));
    const common = { paymentId, checkoutId: randomUUID(), userId: randomUUID(), amount };
    yield { topic: TOPICS.paymentCreated, key: paymentId, value: JSON.stringify({ eventId: randomUUID(), type: 'PaymentCreatedEvent', occurredAt, ...common, items }) };
    const outcome =
      i % 20 === 0
        ? { topic: TOPICS.paymentFailed, value: { eventId: randomUUID(), type: 'PaymentFailedEvent', occurredAt, ...common, transactionId: 'pi_bench', reason: 'card_declined' } }
        : {
            topic: TOPICS.paymentSuccess,
            value: {
              eventId: randomUUID(),
              type: 'PaymentSuccessEvent',
              occurredAt,
              ...common,
              transactionId: 'pi_bench',
              items,
              email: 'b@example.com',
              firstName: 'B',
              phoneNumber: '+10000000000',
            },
          };
    yield { topic: outcome.topic, key: paymentId, value: JSON.stringify(outcome.value) };
  }
}

async function publish(stack: Stack, count: number): Promise<number> {
  const began = performance.now();
  let batch: BusMessage[] = [];
  for (const message of paymentEvents(count)) {
    batch.push(message);
    if (batch.length === 5000) {
      await stack.bus.publish(batch);
      batch = [];
    }
  }
  if (batch.length) await stack.bus.publish(batch);
  return count / ((performance.now() - began) / 1000);
}

/**
 * Starts a fresh analytics service on the stack's database and times how long it takes to reach
 * `total` events: from its start (`eventsPerSecond`, joining the consumer group included) and from
 * the first applied batch on (`ingestEventsPerSecond`: ingestion alone, the events after that batch).
 */
async function drain(stack: Stack, total: number): Promise<{ eventsPerSecond: number; seconds: number; ingestEventsPerSecond: number }> {
  const logger = createLogger('warn');
  const service = await createAnalyticsService({ config: stack.config, logger, bus: stack.bus });
  const count = () => service.db.manager.count(ProcessedEvent, { where: { consumer: consumerGroupOf('analytics') } });
  const before = await count();
  const began = performance.now();
  const port = await service.start(0, '127.0.0.1');
  stack.config.urls.analytics = `http://127.0.0.1:${port}`;
  stack.services.analytics = service;
  let first: { at: number; count: number } | undefined;
  for (;;) {
    const now = await count();
    if (!first && now > before) first = { at: performance.now(), count: now };
    if (now >= total) break;
    // The count scans processed_events on the database being measured: polled every 50 ms at first,
    // then at 1 % of the time elapsed, so it never takes a noticeable share of that database's work.
    await new Promise((resolve) => setTimeout(resolve, Math.max(50, (performance.now() - began) / 100)));
  }
  const ended = performance.now();
  const seconds = (ended - began) / 1000;
  const ingestSeconds = first ? (ended - first.at) / 1000 : 0;
  return {
    eventsPerSecond: Math.round((total - before) / seconds),
    seconds: Number(seconds.toFixed(1)),
    ingestEventsPerSecond: first && ingestSeconds > 0 ? Math.round((total - first.count) / ingestSeconds) : 0,
  };
}

async function readP50(stack: Stack, bearer: string, path: string): Promise<number> {
  const times = await latencies(200, 20, async () => {
    const res = await fetch(`${stack.config.urls.analytics}${path}`, { headers: { authorization: bearer } });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
    await res.arrayBuffer();
  });
  return Number(percentile(times, 50).toFixed(2));
}

export async function analyticsBench(small = 10_000, large = 1_000_000) {
  const stack = await startStack({ env: { LOG_LEVEL: 'warn' } });
  try {
    const admin = (await adminSession(stack)).bearer;
    const smallPublish = await publish(stack, small);
    const first = await drain(stack, small);
    const reads10k = { dashboard: await readP50(stack, admin, '/analytics/dashboard'), revenue: await readP50(stack, admin, '/analytics/revenue?from=2025-11-01&to=2026-10-31') };
    await stack.services.analytics?.stop();

    const largePublish = await publish(stack, large - small);
    const backlog = await drain(stack, large);
    const reads1m = { dashboard: await readP50(stack, admin, '/analytics/dashboard'), revenue: await readP50(stack, admin, '/analytics/revenue?from=2025-11-01&to=2026-10-31') };
    const dashboard = (await (await fetch(`${stack.config.urls.analytics}/analytics/dashboard`, { headers: { authorization: admin } })).json()) as { totalOrders: number };
    return {
      bench: 'analytics',
      bus: stack.bus.kind,
      database: stack.config.dbUrl ? 'mysql' : 'sqlite',
      events: { small, large },
      publishEventsPerSecond: Math.round(Math.min(smallPublish, largePublish)),
      ingestion: { first10k: first, backlog },
      exactlyCounted: dashboard.totalOrders === large / 2,
      p50Ms: { after10k: reads10k, after1m: reads1m },
      ratio: {
        dashboard: Number((reads1m.dashboard / reads10k.dashboard).toFixed(2)),
        revenue: Number((reads1m.revenue / reads10k.revenue).toFixed(2)),
      },
    };
  } finally {
    await stack.stop();
  }
}

if (require.main === module) {
  const [small, large] = process.argv.slice(2).map(Number);
  analyticsBench(small || undefined, large || undefined).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
