/**
 * One database per service: MySQL/MariaDB through `mysql2` when DB_URL is set, otherwise an SQLite
 * file under the data directory through `better-sqlite3`. Schemas come from migrations only.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { Column, DataSource, QueryFailedError, type EntityManager, type QueryRunner, type TableColumnOptions } from 'typeorm';
import type { Config } from './config';
import { serviceUnavailable, type AppError } from './errors';
import { inSpan } from './telemetry/spans';

export type DatabaseKind = 'mysql' | 'sqlite';

/** Entity and migration classes, as TypeORM takes them. */
type ClassList = (abstract new (...args: never[]) => unknown)[];

export interface DatabaseOptions {
  service: string;
  entities: ClassList;
  migrations: ClassList;
  config: Pick<Config, 'dbUrl' | 'dbPrefix' | 'dataDir'>;
  /** Pool size on MySQL. */
  poolSize?: number;
  /** How long to wait for another process's migrations on MySQL (default 60 s). */
  migrationLockTimeoutS?: number;
}

/** A migration's auto-increment primary key: BIGINT on MySQL; SQLite allows AUTOINCREMENT only on a column declared exactly INTEGER. */
export function autoIncrementKey(queryRunner: QueryRunner, name: string): TableColumnOptions {
  const type = queryRunner.connection.driver.options.type === 'mysql' ? 'bigint' : 'integer';
  return { name, type, isPrimary: true, isGenerated: true, generationStrategy: 'increment' };
}

/** A point in time as every table keeps it: DATETIME(3), milliseconds on MySQL and SQLite alike. */
export function TimestampColumn(name: string, options: { nullable?: boolean } = {}): PropertyDecorator {
  return Column({ name, type: 'datetime', precision: 3, ...options });
}

export class Database {
  private sqliteQueue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly dataSource: DataSource,
    readonly kind: DatabaseKind,
    readonly name: string,
  ) {}

  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /**
   * Runs `work` in one transaction. SQLite has a single connection in TypeORM, so its
   * transactions are queued here; otherwise two concurrent ones would nest as savepoints. With
   * tracing on, the transaction is a span (its wait in the queue included); on MySQL the queries
   * in it are spans of the mysql2 instrumentation in a real process.
   *
   * `readCommitted` runs it at READ COMMITTED on MySQL (REPEATABLE READ otherwise): each plain read
   * sees what is committed when it runs rather than a snapshot from the transaction's first read,
   * and its locking reads lock the rows they match without the gaps between them. A transaction
   * that locks a parent row first (a book) may then count its children (the book's holds) with a
   * plain read, locking none of them and none of another parent's. SQLite runs one transaction at
   * a time anyway.
   */
  transaction<T>(work: (manager: EntityManager) => Promise<T>, options: { readCommitted?: boolean } = {}): Promise<T> {
    return inSpan(`transaction ${this.name}`, { attributes: { 'db.system.name': this.kind === 'mysql' ? 'mysql' : 'sqlite', 'db.namespace': this.name } }, () =>
      this.untracedTransaction(work, options.readCommitted === true),
    );
  }

  private untracedTransaction<T>(work: (manager: EntityManager) => Promise<T>, readCommitted: boolean): Promise<T> {
    if (this.kind === 'mysql') return this.mysqlTransaction(work, readCommitted);
    const run = this.sqliteQueue.then(() => this.dataSource.transaction(work));
    this.sqliteQueue = run.catch(() => undefined);
    return run;
  }

  /**
   * InnoDB may pick a transaction as a deadlock victim (two logins of one device, two batches on one
   * day row); it was rolled back whole, so running it again is safe. A few tries, then the error.
   */
  private async mysqlTransaction<T>(work: (manager: EntityManager) => Promise<T>, readCommitted: boolean): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await (readCommitted ? this.dataSource.transaction('READ COMMITTED', work) : this.dataSource.transaction(work));
      } catch (error) {
        if (attempt >= DEADLOCK_RETRIES || !isDeadlock(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
      }
    }
  }

  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

/**
 * The find option that locks the rows a transaction reads until it commits (`...forUpdate(db)`):
 * InnoDB's FOR UPDATE (MariaDB knows no FOR SHARE, and a shared lock would gain little here). SQLite
 * needs none: its transactions already run one at a time (Database.transaction queues them).
 */
export function forUpdate(db: Database): { lock: { mode: 'pessimistic_write' } } | Record<string, never> {
  return db.kind === 'mysql' ? { lock: { mode: 'pessimistic_write' } } : {};
}

export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; errno?: number } | undefined;
  return (
    driverError?.errno === 1062 || driverError?.code === 'ER_DUP_ENTRY' || driverError?.code === 'SQLITE_CONSTRAINT_UNIQUE' || driverError?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/**
 * Codes with which mysql2 (or the socket under it) says the server cannot be reached or dropped the
 * connection; MariaDB answers ER_SERVER_SHUTDOWN and ER_CONNECTION_KILLED to the sessions it ends
 * when it stops.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_CON_COUNT_ERROR',
]);

/**
 * True when `error` (as thrown by the driver, or wrapped in TypeORM's QueryFailedError) says the
 * database is unreachable for now rather than that the query was wrong: a passing outage, which
 * callers answer 503 so clients retry. mysql2 marks every error that broke its connection `fatal`.
 */
const DEADLOCK_RETRIES = 4;

/** InnoDB's deadlock and lock-wait-timeout errors: the transaction was rolled back and may be retried. */
export function isDeadlock(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; errno?: number } | undefined;
  return driverError?.errno === 1213 || driverError?.errno === 1205 || driverError?.code === 'ER_LOCK_DEADLOCK' || driverError?.code === 'ER_LOCK_WAIT_TIMEOUT';
}

export function isDatabaseUnavailable(error: unknown): boolean {
  const driverError = error instanceof QueryFailedError ? (error.driverError as unknown) : undefined;
  return [error, driverError].some((candidate) => {
    if (candidate === null || typeof candidate !== 'object') return false;
    const { code, fatal } = candidate as { code?: unknown; fatal?: unknown };
    return (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) || fatal === true;
  });
}

/** The database down or gone mid-request is a passing outage: 503, never 500, so clients retry. */
export function databaseOutage(error: unknown): AppError | undefined {
  return isDatabaseUnavailable(error) ? serviceUnavailable('The database is unavailable; try again later', 'DATABASE_UNAVAILABLE') : undefined;
}

/**
 * A LIKE pattern matching `text` anywhere, with `%`, `_` and `!` as plain characters; use it with
 * `LIKE :pattern ESCAPE '!'` (the same on MySQL and SQLite). The caller lower-cases both sides.
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

export function databaseName(options: Pick<DatabaseOptions, 'service' | 'config'>): string {
  return `${options.config.dbPrefix}${options.service}`;
}

/** Creates the MySQL database if it is missing; MySQL users of docker-compose get them pre-made. */
async function ensureMysqlDatabase(serverUrl: string, name: string): Promise<void> {
  const mysql = await import('mysql2/promise');
  const connection = await mysql.createConnection({ uri: serverUrl });
  try {
    await connection.query(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  } finally {
    await connection.end();
  }
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const { config } = options;
  const name = databaseName(options);
  let dataSource: DataSource;
  if (config.dbUrl) {
    await ensureMysqlDatabase(config.dbUrl, name);
    const url = new URL(config.dbUrl);
    url.pathname = `/${name}`;
    dataSource = new DataSource({
      type: 'mysql',
      url: url.toString(),
      charset: 'utf8mb4_unicode_ci',
      timezone: 'Z',
      dateStrings: false,
      supportBigNumbers: true,
      bigNumberStrings: false,
      poolSize: options.poolSize ?? 10,
      entities: options.entities,
      migrations: options.migrations,
      // Run below, under a lock, so replicas starting together migrate once.
      migrationsRun: false,
      migrationsTransactionMode: 'each',
      synchronize: false,
      logging: false,
    });
  } else {
    fs.mkdirSync(config.dataDir, { recursive: true });
    dataSource = new DataSource({
      type: 'better-sqlite3',
      database: path.join(config.dataDir, `${name}.sqlite`),
      enableWAL: true,
      prepareDatabase: (db: { pragma: (sql: string) => unknown }) => {
        db.pragma('busy_timeout = 5000');
        db.pragma('foreign_keys = ON');
      },
      entities: options.entities,
      migrations: options.migrations,
      migrationsRun: true,
      migrationsTransactionMode: 'each',
      synchronize: false,
      logging: false,
    });
  }
  await dataSource.initialize();
  if (config.dbUrl) {
    try {
      await migrateUnderLock(dataSource, name, options.migrationLockTimeoutS ?? 60);
    } catch (error) {
      await dataSource.destroy().catch(() => undefined);
      throw error;
    }
  }
  return new Database(dataSource, config.dbUrl ? 'mysql' : 'sqlite', name);
}

/** Another process held the migration lock longer than we were willing to wait. */
export class MigrationLockTimeout extends Error {}

/**
 * Runs pending migrations while holding the server-wide named lock `migrations:<database>`
 * (`GET_LOCK`, held by one pooled connection and released on it, or by the server when that
 * connection dies with its process). Replicas starting together on an empty database thus migrate
 * one after the other: the first applies everything, the others find nothing left to do. SQLite
 * needs no lock: one process owns the file.
 */
async function migrateUnderLock(dataSource: DataSource, name: string, timeoutS: number): Promise<void> {
  const runner = dataSource.createQueryRunner();
  const lock = `migrations:${name}`.slice(0, 64);
  try {
    const [row] = (await runner.query('SELECT GET_LOCK(?, ?) AS got', [lock, timeoutS])) as { got: number | string | null }[];
    if (Number(row?.got) !== 1) throw new MigrationLockTimeout(`Another process held the migration lock of ${name} for more than ${timeoutS} s`);
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await runner.query('SELECT RELEASE_LOCK(?)', [lock]);
    }
  } finally {
    await runner.release();
  }
}
