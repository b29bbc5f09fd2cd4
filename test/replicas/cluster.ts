/**
 * Two processes of every service, built (`node dist/subgraphs/<name>/main.js`), on one set of
 * throwaway MariaDB databases and a Kafka broker of the suite's own, plus a gateway and a Stripe
 * simulator in the test process: the shape of a deployment with replicas, on loopback. The test
 * plays the load balancer: it picks the replica of every request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { SERVICE_NAMES, loadConfig, type Config, type ServiceName } from '../../platform/config';
import { databaseName } from '../../platform/database';
import { KafkaBus } from '../../platform/events/kafka';
import { createLogger } from '../../platform/logger';
import { loadOrCreateSigningKey } from '../../subgraphs/auth/keys';
import { createStripeSimulator, type StripeSimulator } from '../../simulators/stripe/simulator';
import { freePorts } from '../event-fixtures';
import { OwnBroker } from '../faults/infra';
import { spawnService, type ServiceProcess } from '../faults/process';
import { dropDatabases } from '../stack';
import { waitFor } from '../wait';

const REPO = path.resolve(__dirname, '../..');
const WEBHOOK_SECRET = 'whsec_replicas_suite';
const STRIPE_KEY = 'sk_test_replicas_suite';
export const REPLICAS = 2;

/** What a consumer or relay logs when an event goes wrong; none may appear in a healthy run. */
const CONSUMER_TROUBLE = ['event handler failed; redelivering', 'event could not be applied', 'poison message sent to the dead-letter topic', 'kafka consumer crashed'];

/** What a process logs when it replaces a consumer that stopped fetching. */
const CONSUMER_STALLED = 'kafka consumer stalled';
/** What a process logs when it starts a new consumer after one stopped on a passing broker error. */
const CONSUMER_STOPPED = 'kafka consumer stopped on a passing broker error';

export interface Replica {
  name: ServiceName;
  index: number;
  process: ServiceProcess;
  url: string;
  killed: boolean;
}

/** One topic as the relays left it; `twice`: events on it more than once, with the pids that published each copy. */
export interface Published {
  messages: number;
  events: number;
  twice: { eventId: string; publishers: number[] }[];
}

export class ReplicaCluster {
  readonly replicas = new Map<ServiceName, Replica[]>();
  gateway: ServiceProcess | undefined;
  /** Lines of consumer trouble any process wrote. */
  readonly trouble: string[] = [];
  /** Consumers a process found stalled, or saw stop on a passing broker error, and replaced (platform/events/kafka/subscription.ts): recovered, but reported with the figures. */
  readonly stalls: string[] = [];
  private readonly cursor = new Map<ServiceName, number>();
  private webhookTurn = 0;
  private adminBus: KafkaBus | undefined;
  /** `REPLICAS_LOG_DIR`: where each process's whole log is kept, for looking into a failure. */
  private readonly logDir = process.env.REPLICAS_LOG_DIR;

  private constructor(
    readonly config: Config,
    readonly broker: OwnBroker,
    readonly stripe: StripeSimulator,
    private readonly env: Record<string, string>,
  ) {}

  static async start(): Promise<ReplicaCluster> {
    if (!fs.existsSync(path.join(REPO, 'dist/subgraphs/auth/main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    const id = randomBytes(4).toString('hex');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bookstore-replicas-'));
    const broker = await OwnBroker.start();
    const config = loadConfig(
      { DB_URL: process.env.DB_URL, KAFKA_BROKERS: broker.address, DATA_DIR: dataDir, DB_PREFIX: `t${id}_`, INTERNAL_API_KEY: 'replicas-internal-key', LOG_LEVEL: 'warn' },
      { embedded: true },
    );
    // Every auth replica signs with the same key: an operator's secret, mounted into each replica.
    loadOrCreateSigningKey(config.jwt.privateKeyFile);
    let cluster: ReplicaCluster | undefined;
    const stripe = createStripeSimulator({
      webhookUrl: () => cluster?.webhookUrl(),
      webhookSecret: WEBHOOK_SECRET,
      logger: createLogger('warn'),
    });
    const stripePort = await stripe.start(0, '127.0.0.1');
    const env = {
      DB_URL: config.dbUrl ?? '',
      KAFKA_BROKERS: broker.address,
      KAFKA_PARTITIONS: '3',
      DATA_DIR: dataDir,
      DB_PREFIX: config.dbPrefix,
      INTERNAL_API_KEY: config.internalApiKey,
      JWT_PRIVATE_KEY_FILE: config.jwt.privateKeyFile,
      BOOTSTRAP_ADMIN_EMAIL: `admin-${id}@bookstore.test`,
      BOOTSTRAP_ADMIN_PASSWORD: 'AdminPass123',
      STRIPE_API_URL: `http://127.0.0.1:${stripePort}`,
      STRIPE_SECRET_KEY: STRIPE_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      // The limiter keys on the client address the gateway forwards (with its proof, from loopback:
      // GATEWAY_ADDRESSES' default); the test forwards the same way.
      AUTH_RATE_LIMIT_MAX: '20',
      AUTH_RATE_LIMIT_WINDOW_MS: '600000',
      LOG_LEVEL: 'warn',
      // Thirteen processes starting at once on two cores and a fresh broker: each may take longer
      // than the default minute to find its topics; the suite gives up at its own 180 s instead.
      STARTUP_TIMEOUT_MS: '170000',
    };
    cluster = new ReplicaCluster(config, broker, stripe, env);
    return cluster;
  }

  get admin(): { email: string; password: string } {
    return { email: this.env.BOOTSTRAP_ADMIN_EMAIL, password: this.env.BOOTSTRAP_ADMIN_PASSWORD };
  }

  /**
   * Starts every replica of every service and the gateway at the same moment; resolves once all
   * answer their health check. Services call each other through the first replica of each.
   */
  async startAll(): Promise<void> {
    const ports = await freePorts(SERVICE_NAMES.length * REPLICAS + 1);
    const urls: Record<string, string> = {};
    SERVICE_NAMES.forEach((name, i) => (urls[`${name.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[i * REPLICAS]}`));
    const starting: Promise<unknown>[] = [];
    SERVICE_NAMES.forEach((name, i) => {
      const list: Replica[] = [];
      this.replicas.set(name, list);
      for (let index = 0; index < REPLICAS; index += 1) {
        const port = ports[i * REPLICAS + index];
        starting.push(
          // The client id names the replica in the broker's description of each consumer group.
          spawnService(name, { ...this.env, ...urls, KAFKA_CLIENT_ID: `${name}-${index}` }, 180_000, { built: true, port }).then((process) => {
            this.watch(process, `${name}#${index}`);
            list[index] = { name, index, process, url: process.url, killed: false };
          }),
        );
      }
    });
    starting.push(
      spawnService('gateway', { ...this.env, ...urls }, 180_000, { built: true, port: ports[ports.length - 1] }).then((process) => {
        this.watch(process, 'gateway');
        this.gateway = process;
      }),
    );
    const outcomes = await Promise.allSettled(starting);
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** The next live replica of `name`, in turn. */
  pick(name: ServiceName): Replica {
    const live = this.live(name);
    if (live.length === 0) throw new Error(`no live ${name} replica`);
    const turn = this.cursor.get(name) ?? 0;
    this.cursor.set(name, turn + 1);
    return live[turn % live.length];
  }

  live(name: ServiceName): Replica[] {
    return (this.replicas.get(name) ?? []).filter((replica) => !replica.killed);
  }

  all(name: ServiceName): Replica[] {
    return this.replicas.get(name) ?? [];
  }

  /** SIGKILL, as an OOM killer or a lost node would end it; resolves once it is gone. */
  async kill(replica: Replica): Promise<void> {
    replica.killed = true;
    replica.process.child.kill('SIGKILL');
    await replica.process.exited;
  }

  private webhookUrl(): string | undefined {
    const live = this.live('payment');
    if (live.length === 0) return undefined;
    this.webhookTurn += 1;
    return `${live[this.webhookTurn % live.length].url}/api/payments/webhook`;
  }

  private watch(process: ServiceProcess, label: string): void {
    if (this.logDir) {
      fs.mkdirSync(this.logDir, { recursive: true });
      fs.writeFileSync(path.join(this.logDir, `${label}.log`), process.output());
      const log = fs.createWriteStream(path.join(this.logDir, `${label}.log`), { flags: 'a' });
      process.child.stdout?.pipe(log);
    }
    const note = (line: string) => {
      if (CONSUMER_TROUBLE.some((text) => line.includes(text))) this.trouble.push(`${label}: ${line}`);
      if (line.includes(CONSUMER_STALLED) || line.includes(CONSUMER_STOPPED)) this.stalls.push(`${label}: ${line}`);
    };
    let rest = '';
    const scan = (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      lines.forEach(note);
    };
    process.child.stdout?.on('data', scan);
    process.child.stderr?.on('data', scan);
    process.output().split('\n').forEach(note);
  }

  /** One query on a service's database (the suite's own connection). */
  async query<T>(service: ServiceName, sql: string, params: unknown[] = []): Promise<T[]> {
    const mysql = await import('mysql2/promise');
    const connection = await mysql.createConnection({ uri: this.config.dbUrl, database: databaseName({ service, config: this.config }) });
    try {
      const [rows] = await connection.query(sql, params);
      return rows as T[];
    } finally {
      await connection.end();
    }
  }

  /**
   * Where each of `topics` stands, for a failure message: per partition, the broker's log (its end,
   * transactions committed, aborted and still open) and, when a consumer group is named, what it
   * committed and what read-committed readers can see, and which member of the group holds each
   * partition (each replica's Kafka client id is its name).
   */
  async explain(topics: { topic: string; groupId?: string }[]): Promise<string> {
    const lines: string[] = [];
    for (const { topic, groupId } of topics) {
      try {
        this.adminBus ??= new KafkaBus({ brokers: [this.broker.address], clientId: 'replicas-suite-admin', logger: createLogger('silent') });
        const lag = groupId ? await this.adminBus.partitionLag(groupId, topic) : [];
        for (let partition = 0; partition < Number(this.env.KAFKA_PARTITIONS); partition += 1) {
          const log = await this.broker.partitionLog(topic, partition);
          lines.push(`${topic}-${partition}: ${JSON.stringify({ log, ...(groupId ? { groupId, ...lag.find((l) => l.partition === partition) } : {}) })}`);
        }
        if (groupId) {
          const { state, members } = await this.adminBus.groupMembers(groupId);
          const held = members.map(({ clientId, memberId, assignment }) => `${clientId} ${memberId.slice(-8)} ${JSON.stringify(assignment[topic] ?? [])}`);
          lines.push(`${groupId} (${state}): ${held.join('; ') || 'no members'}`);
        }
      } catch (error) {
        lines.push(`${topic}: not read (${(error as Error).message})`);
      }
    }
    return lines.join('\n');
  }

  /**
   * What the relays published: every committed message on each topic, read from the start by a
   * consumer group of the suite's own until it has seen `events` distinct eventIds on each topic and
   * committed everything, counted whole and by distinct eventId. The count matters: a killed relay's
   * open transaction hides the messages behind it until the broker aborts it, and until then the
   * topic's readable end stops short of them.
   */
  async publishedOn(topics: string[], events: number): Promise<Record<string, Published>> {
    const bus = new KafkaBus({ brokers: [this.broker.address], clientId: 'replicas-suite', logger: createLogger('silent') });
    const groupId = `replicas-suite-reader-${randomBytes(4).toString('hex')}`;
    const seen = new Map(topics.map((topic) => [topic, { messages: 0, publishers: new Map<string, number[]>() }]));
    try {
      const subscription = await bus.subscribe({
        groupId,
        topics,
        handleBatch: async (messages) => {
          for (const message of messages) {
            const tally = seen.get(message.topic)!;
            tally.messages += 1;
            const eventId = message.headers?.eventId ?? '';
            const pid = Number((message.headers?.publisher ?? '').split('/').pop());
            tally.publishers.set(eventId, [...(tally.publishers.get(eventId) ?? []), pid]);
          }
        },
      });
      for (const topic of topics) {
        await waitFor(async () => ({ events: seen.get(topic)!.publishers.size, uncommitted: await bus.uncommitted(groupId, topic) }), {
          what: `${events} events on ${topic} read`,
          accept: (read) => read.events >= events && read.uncommitted === 0,
          timeoutMs: 120_000,
          intervalMs: 500,
        });
      }
      await subscription.stop();
    } finally {
      await bus.close();
    }
    return Object.fromEntries(
      [...seen].map(([topic, tally]) => [
        topic,
        {
          messages: tally.messages,
          events: tally.publishers.size,
          twice: [...tally.publishers].filter(([, pids]) => pids.length > 1).map(([eventId, pids]) => ({ eventId, publishers: pids })),
        },
      ]),
    );
  }

  async stop(): Promise<void> {
    await this.adminBus?.close();
    const everyone = [...[...this.replicas.values()].flat().map((replica) => replica.process), ...(this.gateway ? [this.gateway] : [])];
    for (const process of everyone) process.child.kill('SIGKILL');
    await Promise.all(everyone.map((process) => process.exited));
    await this.stripe.stop();
    if (this.logDir) fs.writeFileSync(path.join(this.logDir, 'kafka-broker.log'), this.broker.serverLog());
    await this.broker.destroy();
    await dropDatabases(this.config, SERVICE_NAMES);
  }
}
