/**
 * A tiny service for the event tests: a counters table with its migration, one event type, and
 * throwaway databases (SQLite in a temp dir, or MySQL/MariaDB when DB_URL is set).
 */
import 'reflect-metadata';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { Equals, IsISO8601, IsInt, IsString, IsUUID, Min } from 'class-validator';
import { Column, Entity, PrimaryColumn, Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { loadConfig, type Config } from '../platform/config';
import { databaseName, openDatabase, type Database } from '../platform/database';
import { createLogger } from '../platform/logger';
import { ProcessedEvent } from '../platform/events/consumer';
import { KafkaBus, type KafkaBusOptions } from '../platform/events/kafka-bus';
import { OutboxEvent } from '../platform/events/outbox';
import type { EventEnvelope } from '../platform/events/topics';
import { EventTables1732000000000 } from '../platform/migrations/1732000000000-EventTables';

/** DB_URL, KAFKA_BROKERS and LOG_LEVEL as the test run was given them. */
export const testConfig = loadConfig(process.env, { embedded: true });
export const testLogger = createLogger(testConfig.logLevel, { test: true });

@Entity({ name: 'counters' })
export class Counter {
  @PrimaryColumn({ type: 'varchar', length: 60 })
  name!: string;

  @Column({ type: 'int' })
  value!: number;
}

export class TestCounters1900000000000 implements MigrationInterface {
  name = 'TestCounters1900000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'counters',
        columns: [
          { name: 'name', type: 'varchar', length: '60', isPrimary: true },
          { name: 'value', type: 'int' },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('counters');
  }
}

export class CounterIncremented implements EventEnvelope {
  @IsUUID()
  eventId!: string;

  @Equals('CounterIncremented')
  type!: 'CounterIncremented';

  @IsISO8601({ strict: true })
  occurredAt!: string;

  @IsString()
  counter!: string;

  @IsInt()
  @Min(0)
  seq!: number;
}

export function counterIncremented(counter: string, seq: number): CounterIncremented {
  return { eventId: randomUUID(), type: 'CounterIncremented', occurredAt: new Date().toISOString(), counter, seq };
}

export async function readCounter(db: Database, name: string): Promise<number> {
  return (await db.manager.findOneBy(Counter, { name }))?.value ?? 0;
}

/** Ports nothing listens on now, e.g. for a broker of a test's own or one that is not there. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<net.Server>((resolve, reject) => {
      const server = net.createServer().once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve(server));
    })),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export function makeKafkaBus(overrides: Partial<KafkaBusOptions> = {}): KafkaBus {
  return new KafkaBus({ brokers: testConfig.kafkaBrokers ?? [], clientId: 'bookstore-test', logger: testLogger, ...overrides });
}

/** Databases named with a prefix unique to this test file, all dropped by `dropAll()`. */
export class TestDatabases {
  readonly config: Pick<Config, 'dbUrl' | 'dbPrefix' | 'dataDir'>;
  private readonly opened: Database[] = [];
  private readonly services: string[] = [];

  constructor() {
    this.config = {
      dbUrl: testConfig.dbUrl,
      dbPrefix: `t_${randomBytes(4).toString('hex')}_`,
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'bookstore-events-')),
    };
  }

  async open(service: string): Promise<Database> {
    const db = await openDatabase({
      service,
      config: this.config,
      entities: [Counter, OutboxEvent, ProcessedEvent],
      migrations: [EventTables1732000000000, TestCounters1900000000000],
    });
    this.opened.push(db);
    this.services.push(service);
    return db;
  }

  async dropAll(): Promise<void> {
    await Promise.all(this.opened.map((db) => db.close()));
    if (this.config.dbUrl) {
      const mysql = await import('mysql2/promise');
      const connection = await mysql.createConnection({ uri: this.config.dbUrl });
      try {
        for (const service of this.services) {
          await connection.query(`DROP DATABASE IF EXISTS \`${databaseName({ service, config: this.config })}\``);
        }
      } finally {
        await connection.end();
      }
    }
    fs.rmSync(this.config.dataDir, { recursive: true, force: true });
  }
}
