/**
 * One database per service: MySQL/MariaDB through `mysql2` when DB_URL is set, otherwise an SQLite
 * file under the data directory through `better-sqlite3`. Schemas come from migrations only.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { DataSource, QueryFailedError, type EntityManager } from 'typeorm';
import type { Config } from './config';

export type DatabaseKind = 'mysql' | 'sqlite';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
type ClassList = Function[];

export interface DatabaseOptions {
  service: string;
  entities: ClassList;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: Function[];
  config: Pick<Config, 'dbUrl' | 'dbPrefix' | 'dataDir'>;
  /** Pool size on MySQL. */
  poolSize?: number;
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
   * transactions are queued here; otherwise two concurrent ones would nest as savepoints.
   */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.kind === 'mysql') return this.dataSource.transaction(work);
    const run = this.sqliteQueue.then(() => this.dataSource.transaction(work));
    this.sqliteQueue = run.catch(() => undefined);
    return run;
  }

  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; errno?: number } | undefined;
  return (
    driverError?.errno === 1062 ||
    driverError?.code === 'ER_DUP_ENTRY' ||
    driverError?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    driverError?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
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
      migrationsRun: true,
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
  return new Database(dataSource, config.dbUrl ? 'mysql' : 'sqlite', name);
}
