/**
 * Events per second through the whole delivery path: state changes committed with their outbox
 * rows, the relay publishing them, an idempotent consumer applying them to aggregates. Kafka and
 * MySQL when KAFKA_BROKERS / DB_URL say so, the embedded bus and SQLite otherwise.
 * Build, then run: node dist/bench/events.js [events=20000]. Prints one JSON line; asserts nothing.
 * Profile with `node --cpu-prof --cpu-prof-dir=.tmp/prof dist/bench/events.js`.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../platform/config';
import { openDatabase, type Database } from '../platform/database';
import { createLogger } from '../platform/logger';
import { createEventBus } from '../platform/events/create-bus';
import { ProcessedEvent, consumeBatch } from '../platform/events/consumer';
import { enqueueMessage } from '../platform/events/outbox';
import { OutboxRelay } from '../platform/events/outbox-relay';
import { EVENT_ENTITIES, EVENT_MIGRATIONS } from '../platform/events/tables';
import { Counter, CounterIncremented, TestCounters1900000000000, counterIncremented } from '../test/event-fixtures';
import { dropDatabases } from '../test/stack';
import { waitFor } from '../test/wait';

const KEYS = 100;

const perSecond = (count: number, ms: number) => Math.round((count / ms) * 1000);

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 20000);
  if (!Number.isInteger(total) || total < 1) throw new Error(`events must be a positive integer, got "${process.argv[2]}"`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-events-'));
  // A database of its own per run: two runs on one MariaDB (another tree's) must not drop each other's tables.
  const config = loadConfig({ ...process.env, DB_PREFIX: `bench_${randomUUID().slice(0, 8)}_`, DATA_DIR: dataDir }, { embedded: true });
  // Warnings only: the report must be the line that stands out.
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, { bench: 'events' });
  const service = 'events';
  await dropDatabases(config, [service], { keepDataDir: true });
  const db: Database = await openDatabase({
    service,
    config,
    entities: [...EVENT_ENTITIES, Counter],
    migrations: [...EVENT_MIGRATIONS, TestCounters1900000000000],
    poolSize: 20,
  });
  const bus = createEventBus({ ...config, kafkaClientId: 'bench-events' }, logger);
  const topic = `bench-events-${randomUUID()}`;
  const groupId = `bench-counters-${randomUUID()}`;
  let deliveries = 0;
  try {
    await db.manager.insert(
      Counter,
      Array.from({ length: KEYS }, (_, i) => ({ name: `key-${i}`, value: 0 })),
    );

    // Phase 1: the producing side, one state change and its event per transaction.
    const producers = db.kind === 'mysql' ? 8 : 1;
    let next = 0;
    const enqueueStart = Date.now();
    await Promise.all(
      Array.from({ length: producers }, async () => {
        for (let i = next++; i < total; i = next++) {
          await db.transaction(async (manager) => {
            const key = `key-${i % KEYS}`;
            await enqueueMessage(manager, topic, key, counterIncremented(key, i));
          });
        }
      }),
    );
    const enqueueMs = Date.now() - enqueueStart;

    // Phase 2: outbox -> bus -> idempotent consumer, timed until the last event is applied.
    // The consumer applies each batch in one transaction: the events it has not applied yet are
    // recorded by eventId and their increments summed per key, one UPDATE per key in the batch.
    const subscription = await consumeBatch({
      bus,
      db,
      logger,
      groupId,
      topics: { [topic]: CounterIncremented },
      applyBatch: async (events, manager) => {
        deliveries += events.length;
        const perKey = new Map<string, number>();
        for (const { event } of events) {
          const { counter } = event as CounterIncremented;
          perKey.set(counter, (perKey.get(counter) ?? 0) + 1);
        }
        for (const [name, count] of perKey) await manager.increment(Counter, { name }, 'value', count);
      },
    });
    const relay = new OutboxRelay({ db, bus, logger });
    const start = Date.now();
    let relayMs = 0;
    relay.start();
    const applied = () => db.manager.countBy(ProcessedEvent, { consumer: groupId });
    await waitFor(
      async () => {
        if (!relayMs && (await relay.pending()) === 0) relayMs = Date.now() - start;
        return (await applied()) >= total;
      },
      { timeoutMs: 600000, intervalMs: 100, what: `${total} events applied` },
    );
    const endToEndMs = Date.now() - start;
    await relay.stop();
    await subscription.stop();
    const tallied = Number((await db.manager.sum(Counter, 'value')) ?? 0);

    process.stdout.write(
      `${JSON.stringify({
        bench: 'events',
        events: total,
        bus: bus.kind,
        db: db.kind,
        cpus: os.cpus().length,
        enqueue: { ms: enqueueMs, perSecond: perSecond(total, enqueueMs), concurrency: producers },
        relay: { ms: relayMs, perSecond: perSecond(total, relayMs) },
        endToEnd: { ms: endToEndMs, perSecond: perSecond(total, endToEndMs) },
        applied: await applied(),
        tallied,
        exactlyCounted: tallied === total,
        applyAttempts: deliveries,
      })}\n`,
    );
  } finally {
    await bus.close();
    await db.close();
    await dropDatabases(config, [service]);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/events failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
