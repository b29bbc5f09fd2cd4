/**
 * Infrastructure a fault test may break without touching anyone else's: a Kafka broker and a
 * MariaDB server of its own, on free loopback ports, stopped and started by their pid. The shared
 * broker (9092) and database (3306) other test files use are never signalled.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../platform/config';
import { freePorts } from '../event-fixtures';
import { describeIf } from '../skip';
import { waitFor } from '../wait';

const run = promisify(execFile);
const REPO = path.resolve(__dirname, '../..');

/** The second CI run (MariaDB and Kafka) is where fault tests run; elsewhere they are skipped. */
const { dbUrl, kafkaBrokers } = loadConfig(process.env, { embedded: true });
export const FULL_INFRASTRUCTURE = dbUrl !== undefined && kafkaBrokers !== undefined;

/** `describe` when the full infrastructure is in use, otherwise a skipped block saying how to run it. */
export function describeFaults(title: string, body: () => void): void {
  describeIf(FULL_INFRASTRUCTURE, title, 'faults: set KAFKA_BROKERS and DB_URL to run', body);
}

/** A single-node KRaft broker of the test's own, run by scripts/kafka.sh in a temp work dir. */
export class OwnBroker {
  private constructor(
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
    private readonly work: string,
  ) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** `port`: where clients will find it (e.g. told to a service before the broker is up); default a free one. */
  static async start(options: { port?: number } = {}): Promise<OwnBroker> {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kafka-fault-'));
    const [freePort, controllerPort] = await freePorts(2);
    const port = options.port ?? freePort;
    const env = { ...process.env, KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(controllerPort), KAFKA_WORK: work };
    const broker = new OwnBroker(port, env, work);
    await broker.script('start');
    return broker;
  }

  /** Stops the broker, keeping its topics, messages and committed offsets for `resume()`. */
  async pause(): Promise<void> {
    await this.script('stop', '--keep-data');
  }

  /** Starts the broker again on the store `pause()` kept. */
  async resume(): Promise<void> {
    await this.script('start', '--keep-data');
  }

  async destroy(): Promise<void> {
    await this.script('stop').catch(() => undefined);
    fs.rmSync(this.work, { recursive: true, force: true });
  }

  /** The broker's own log (server.log), for a failing test to keep. */
  serverLog(): string {
    return fs.readFileSync(path.join(this.work, 'server.log'), 'utf8');
  }

  /**
   * What one partition's log holds, read from the broker's files with Kafka's DumpLogSegments: its
   * end offset, how many transactions were committed and aborted in it, and the transactions still
   * open at its end (their producer and first offset). The first open one is where read-committed
   * readers stop until it ends.
   */
  async partitionLog(topic: string, partition: number): Promise<PartitionLog> {
    const dir = path.join(this.work, 'data', `${topic}-${partition}`);
    const files = fs
      .readdirSync(dir)
      .filter((name) => name.endsWith('.log'))
      .sort()
      .map((name) => path.join(dir, name));
    const lib = path.join(process.env.KAFKA_CACHE ?? path.join(REPO, '.cache/kafka', KAFKA_VERSION), 'lib');
    const { stdout } = await run('java', ['-Xmx256m', '-cp', `${lib}/*`, 'kafka.tools.DumpLogSegments', '--deep-iteration', '--files', files.join(',')], {
      timeout: 60_000,
      maxBuffer: 256 << 20,
    });
    return readPartitionLog(stdout);
  }

  private async script(...args: string[]): Promise<void> {
    await run('bash', [path.join(REPO, 'scripts/kafka.sh'), ...args], { env: this.env, timeout: 120_000 });
  }
}

export interface PartitionLog {
  end: number;
  committed: number;
  aborted: number;
  open: { producerId: string; firstOffset: number }[];
}

/** The Kafka release scripts/kafka.sh runs (its KAFKA_VERSION). */
const KAFKA_VERSION = /^KAFKA_VERSION=(\S+)$/m.exec(fs.readFileSync(path.join(REPO, 'scripts/kafka.sh'), 'utf8'))![1];

/**
 * Folds DumpLogSegments' deep listing: a batch line (`baseOffset: … lastOffset: … producerId: …
 * isTransactional: … isControl: …`) opens its producer's transaction when it is transactional data,
 * and a control record (`endTxnMarker: COMMIT|ABORT`) ends the transaction of its batch's producer.
 */
export function readPartitionLog(listing: string): PartitionLog {
  const open = new Map<string, number>();
  const result: PartitionLog = { end: 0, committed: 0, aborted: 0, open: [] };
  let producer = '';
  for (const line of listing.split('\n')) {
    const batch = /^baseOffset: (\d+) lastOffset: (\d+) .*producerId: (-?\d+) .*isTransactional: (true|false) isControl: (true|false)/.exec(line);
    if (batch) {
      const [, base, last, producerId, transactional, control] = batch;
      producer = producerId;
      result.end = Number(last) + 1;
      if (transactional === 'true' && control === 'false' && !open.has(producerId)) open.set(producerId, Number(base));
      continue;
    }
    const marker = /endTxnMarker: (COMMIT|ABORT)/.exec(line);
    if (marker) {
      open.delete(producer);
      if (marker[1] === 'COMMIT') result.committed += 1;
      else result.aborted += 1;
    }
  }
  result.open = [...open].map(([producerId, firstOffset]) => ({ producerId, firstOffset })).sort((a, b) => a.firstOffset - b.firstOffset);
  return result;
}

function firstExecutable(candidates: string[]): string {
  const dirs = (process.env.PATH ?? '').split(path.delimiter);
  for (const candidate of candidates) {
    const found = path.isAbsolute(candidate) ? [candidate] : dirs.map((dir) => path.join(dir, candidate));
    for (const file of found) {
      try {
        fs.accessSync(file, fs.constants.X_OK);
        return file;
      } catch {
        // next
      }
    }
  }
  throw new Error(`none of ${candidates.join(', ')} is installed`);
}

/**
 * A MariaDB server of the test's own: a fresh data directory (root, empty password, over TCP on a
 * free port), started as a child of this process and stopped with SIGTERM to its pid, so it can go
 * down and come back on the same data and port.
 */
export class OwnMariaDb {
  private server: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `mysql://root@127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.server?.pid;
  }

  static async create(): Promise<OwnMariaDb> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mariadb-fault-'));
    const [port] = await freePorts(1);
    const db = new OwnMariaDb(port, dir);
    const install = firstExecutable(['mariadb-install-db', 'mysql_install_db']);
    await run(install, ['--no-defaults', `--datadir=${db.dataDir}`, '--auth-root-authentication-method=normal', '--skip-test-db', `--user=${os.userInfo().username}`], {
      timeout: 60_000,
    });
    await db.start();
    return db;
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  /** Starts the server on its data directory and port (unless it runs); resolves once it answers a query. */
  async start(): Promise<void> {
    if (this.server) return;
    const binary = firstExecutable(['/usr/sbin/mariadbd', 'mariadbd', '/usr/sbin/mysqld', 'mysqld']);
    const log = fs.openSync(path.join(this.dir, 'server.log'), 'a');
    const server = spawn(
      binary,
      [
        '--no-defaults',
        `--datadir=${this.dataDir}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--socket=${path.join(this.dir, 'mysqld.sock')}`,
        `--pid-file=${path.join(this.dir, 'mysqld.pid')}`,
        `--user=${os.userInfo().username}`,
        '--skip-name-resolve',
        '--innodb-buffer-pool-size=64M',
        '--max-connections=300',
      ],
      { stdio: ['ignore', log, log] },
    );
    fs.closeSync(log);
    this.server = server;
    this.exited = new Promise((resolve) => server.once('exit', () => resolve()));
    const ready = waitFor(
      async () => {
        const mysql = await import('mysql2/promise');
        const connection = await mysql.createConnection({ uri: this.url, connectTimeout: 1000 });
        await connection.query('SELECT 1');
        await connection.end();
        return true;
      },
      { what: `mariadbd on port ${this.port}`, timeoutMs: 60_000, intervalMs: 100 },
    );
    const died = this.exited.then(() => Promise.reject(new Error(`mariadbd exited before it answered: ${this.logTail()}`)));
    try {
      await Promise.race([ready, died]);
    } catch (error) {
      await this.stop(5000);
      throw error;
    } finally {
      ready.catch(() => undefined);
      died.catch(() => undefined);
    }
  }

  /** SIGTERM to the server's pid, then waits for it to exit (SIGKILL after `graceMs`). */
  async stop(graceMs = 30_000): Promise<void> {
    const server = this.server;
    if (!server) return;
    if (server.exitCode !== null || server.signalCode !== null) {
      this.server = undefined;
      return;
    }
    server.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        server.kill('SIGKILL');
        resolve();
      }, graceMs);
    });
    await Promise.race([this.exited, killed]);
    clearTimeout(timer);
    await this.exited;
    this.server = undefined;
  }

  async destroy(): Promise<void> {
    await this.stop(10_000);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  logTail(): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'server.log'), 'utf8').slice(-2000);
    } catch {
      return '';
    }
  }
}
