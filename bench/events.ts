/**
 * Events per second through the whole delivery path: state changes committed with their outbox
 * rows, the relay publishing them, an idempotent consumer applying them to aggregates. Kafka and
 * MySQL when KAFKA_BROKERS / DB_URL say so, the embedded bus and SQLite otherwise.
 * Build, then run: node dist/bench/events.js [events=20000]. Prints one JSON line; asserts nothing.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { IsISO8601, IsString, IsUUID } from 'class-validator';
import { Column, Entity, PrimaryColumn, Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { loadConfig } from '../platform/config';
import { databaseName, openDatabase, type Database } from '../platform/database';
import { createLogger } from '../platform/logger';
import { createEventBus } from '../platform/events/create-bus';
import { ProcessedEvent, consume } from '../platform/events/consumer';
import { OutboxEvent, OutboxRelay, enqueueEvent, eventEnvelope } from '../platform/events/outbox';
import type { EventEnvelope } from '../platform/events/topics';
import { EventTables1732000000000 } from '../platform/migrations/1732000000000-EventTables';

const KEYS = 100;

@Entity({ name: 'bench_tallies' })
class Tally {
  @PrimaryColumn({ type: 'varchar', length: 60 })
  key!: string;

  @Column({ type: 'int' })
  count!: number;
}

class BenchTallies1900000000001 implements MigrationInterface {
  name = 'BenchTallies1900000000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'bench_tallies',
        columns: [
          { name: 'key', type: 'varchar', length: '60', isPrimary: true },
          { name: 'count', type: 'int' },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('bench_tallies');
  }
}

class TallyEvent implements EventEnvelope {
  @IsUUID()
  eventId!: string;

  @IsString()
  type!: string;

  @IsISO8601()
  occurredAt!: string;

  @IsString()
  key!: string;
}

async function dropMysqlDatabase(serverUrl: string, name: string): Promise<void> {
  const mysql = await import('mysql2/promise');
  const connection = await mysql.createConnection({ uri: serverUrl });
  try {
    await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
  } finally {
    await connection.end();
  }
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const perSecond = (count: number, ms: number) => Math.round((count / ms) * 1000);

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 20000);
  if (!Number.isInteger(total) || total < 1) throw new Error(`events must be a positive integer, got "${process.argv[2]}"`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-events-'));
  const config = loadConfig({ ...process.env, DB_PREFIX: 'bench_', DATA_DIR: dataDir }, { embedded: true });
  // Warnings only: the report must be the line that stands out.
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, { bench: 'events' });
  const service = 'events';
  if (config.dbUrl) await dropMysqlDatabase(config.dbUrl, databaseName({ service, config }));
  const db: Database = await openDatabase({
    service,
    config,
    entities: [OutboxEvent, ProcessedEvent, Tally],
    migrations: [EventTables1732000000000, BenchTallies1900000000001],
    poolSize: 20,
  });
  const bus = createEventBus({ ...config, kafkaClientId: 'bench-events' }, logger);
  const topic = `bench-events-${randomUUID()}`;
  const groupId = `bench-tallies-${randomUUID()}`;
  let deliveries = 0;
  try {
    await db.manager.insert(Tally, Array.from({ length: KEYS }, (_, i) => ({ key: `key-${i}`, count: 0 })));

    // Phase 1: the producing side, one state change and its event per transaction.
    const producers = db.kind === 'mysql' ? 8 : 1;
    let next = 0;
    const enqueueStart = Date.now();
    await Promise.all(
      Array.from({ length: producers }, async () => {
        for (let i = next++; i < total; i = next++) {
          await db.transaction(async (manager) => {
            const key = `key-${i % KEYS}`;
            const event = { ...eventEnvelope('TallyIncremented'), key };
            await enqueueEvent(manager, topic, key, event);
          });
        }
      }),
    );
    const enqueueMs = Date.now() - enqueueStart;

    // Phase 2: outbox -> bus -> idempotent consumer, timed until the last event is applied.
    const subscription = await consume({
      bus,
      db,
      logger,
      groupId,
      topic,
      schema: TallyEvent,
      apply: async (event, manager) => {
        deliveries++;
        await manager.increment(Tally, { key: event.key }, 'count', 1);
      },
    });
    const relay = new OutboxRelay({ db, bus, logger });
    const start = Date.now();
    let relayMs = 0;
    relay.start();
    const applied = () => db.manager.countBy(ProcessedEvent, { consumer: groupId });
    await waitUntil(
      async () => {
        if (!relayMs && (await relay.pending()) === 0) relayMs = Date.now() - start;
        return (await applied()) >= total;
      },
      600000,
      `${total} events applied`,
    );
    const endToEndMs = Date.now() - start;
    await relay.stop();
    await subscription.stop();
    const tallied = Number((await db.manager.sum(Tally, 'count')) ?? 0);

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
    if (config.dbUrl) await dropMysqlDatabase(config.dbUrl, databaseName({ service, config }));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/events failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
