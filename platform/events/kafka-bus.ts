/**
 * The full setup's bus: Kafka through kafkajs. This is the only file that imports kafkajs, so the
 * client can be swapped without touching a service.
 */
import { Kafka, Partitioners, logLevel as KafkaLogLevel } from 'kafkajs';
import type { Admin, Consumer, EachBatchPayload, KafkaMessage, LogEntry, Producer } from 'kafkajs';
import type { Logger } from '../logger';
import type { BusMessage, ConsumedMessage, EventBus, SubscribeOptions, Subscription } from './bus';
import { RETRY_BACKOFF_MS, deliver, nextBackoff } from './bus';

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /** Partitions of the topics this bus creates. */
  numPartitions?: number;
  /** A publish rejects after this long, so the outbox relay backs off instead of hanging. */
  publishTimeoutMs?: number;
  /** How long `subscribe()` waits for the consumer to join its group. */
  joinTimeoutMs?: number;
  healthTimeoutMs?: number;
}

// Bounded everywhere: a client that retried forever would hide an outage from the relay's back-off.
const CLIENT_RETRY = { retries: 5, initialRetryTime: 100, maxRetryTime: 2000, factor: 0.2, multiplier: 2 };

const { DEBUG, INFO, WARN, ERROR, NOTHING } = KafkaLogLevel;
const KAFKA_LEVELS: Record<string, KafkaLogLevel> = { trace: DEBUG, debug: DEBUG, info: INFO, warn: WARN, error: ERROR, fatal: ERROR, silent: NOTHING };
const PINO_METHODS = { [ERROR]: 'error', [WARN]: 'warn', [INFO]: 'info', [DEBUG]: 'debug', [NOTHING]: 'debug' } as const;

/** kafkajs logs through our pino logger, tagged with the kafkajs component that spoke. */
function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, logger: _name, ...fields } = log as { message: string; [key: string]: unknown };
      // We limit the idempotent producer's retries on purpose (see publish) and the consumers are
      // idempotent, so kafkajs's exactly-once warning is noise.
      const method = message.startsWith('Limiting retries for the idempotent producer') ? 'debug' : PINO_METHODS[level];
      logger[method]({ kafka: namespace, ...fields }, message);
    };
}

async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** A kafkajs client connected on first use and replaced after a failure or a timeout. */
class Reconnecting<T extends { connect(): Promise<void>; disconnect(): Promise<void> }> {
  private ready: Promise<T> | undefined;

  constructor(private readonly create: () => T) {}

  async use<R>(what: string, timeoutMs: number, work: (client: T) => Promise<R>): Promise<R> {
    if (!this.ready) {
      const client = this.create();
      this.ready = client.connect().then(() => client);
    }
    const ready = this.ready;
    const attempt = ready.then(work);
    try {
      return await withTimeout(attempt, timeoutMs, what);
    } catch (error) {
      attempt.catch(() => undefined);
      if (this.ready === ready) this.ready = undefined;
      ready.then((client) => client.disconnect()).catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    const ready = this.ready;
    this.ready = undefined;
    await ready?.then((client) => client.disconnect()).catch(() => undefined);
  }
}

export class KafkaBus implements EventBus {
  readonly kind = 'kafka' as const;
  private readonly kafka: Kafka;
  private readonly logger: Logger;
  private readonly numPartitions: number;
  private readonly producer: Reconnecting<Producer>;
  private readonly admin: Reconnecting<Admin>;
  private readonly ensuredTopics = new Set<string>();
  private readonly subscriptions = new Set<KafkaSubscription>();
  private closed = false;

  constructor(private readonly options: KafkaBusOptions) {
    this.logger = options.logger.child({ component: 'kafka' });
    this.numPartitions = options.numPartitions ?? 3;
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      connectionTimeout: 3000,
      requestTimeout: 30000,
      retry: CLIENT_RETRY,
      logLevel: KAFKA_LEVELS[this.logger.level] ?? INFO,
      logCreator: kafkaLogCreator(this.logger),
    });
    this.producer = new Reconnecting(() =>
      this.kafka.producer({
        idempotent: true,
        // One request in flight per broker keeps the order per key even across retries.
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: CLIENT_RETRY,
      }),
    );
    this.admin = new Reconnecting(() => this.kafka.admin({ retry: CLIENT_RETRY }));
  }

  async publish(messages: BusMessage[]): Promise<void> {
    if (this.closed) throw new Error('The event bus is closed');
    if (messages.length === 0) return;
    const byTopic = new Map<string, BusMessage[]>();
    for (const message of messages) {
      const list = byTopic.get(message.topic);
      if (list) list.push(message);
      else byTopic.set(message.topic, [message]);
    }
    const topicMessages = [...byTopic].map(([topic, list]) => ({ topic, messages: list.map(({ key, value, headers }) => ({ key, value, headers })) }));
    try {
      await this.producer.use('publishing to Kafka', this.options.publishTimeoutMs ?? 30000, async (producer) => {
        await this.ensureTopics([...byTopic.keys()]);
        await producer.sendBatch({ acks: -1, topicMessages });
      });
    } catch (error) {
      // The producer is replaced: after exhausted retries its sequence numbers may no longer match
      // the broker's. The topics are checked again in case the cluster itself was replaced.
      this.ensuredTopics.clear();
      throw error;
    }
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (this.closed) throw new Error('The event bus is closed');
    // kafkajs's group leader assigns only the topics it subscribed itself: a member of the same group
    // on other topics would silently never get their partitions.
    const topicSet = (topics: string[]) => [...new Set(topics)].sort().join(',');
    const clash = [...this.subscriptions].find((s) => s.options.groupId === options.groupId && topicSet(s.options.topics) !== topicSet(options.topics));
    if (clash) throw new Error(`Consumer group ${options.groupId} already subscribes ${topicSet(clash.options.topics)}; one Kafka group must subscribe the same topics everywhere`);
    await this.ensureTopics(options.topics);
    const subscription = new KafkaSubscription(this.kafka, options, this.logger, this.numPartitions, (force) =>
      this.ensureTopics(options.topics, force),
    );
    await subscription.start(this.options.joinTimeoutMs ?? 60000);
    this.subscriptions.add(subscription);
    return {
      stop: async () => {
        this.subscriptions.delete(subscription);
        await subscription.stop();
      },
    };
  }

  async health(): Promise<void> {
    if (this.closed) throw new Error('The event bus is closed');
    await this.admin.use('Kafka health check', this.options.healthTimeoutMs ?? 3000, (admin) => admin.describeCluster());
  }

  /**
   * Messages of `topic` past the offsets `groupId` committed, over all partitions (a partition it
   * never committed on counts whole): 0 once a consumer that applied everything stopped cleanly.
   * For operators and tests; the names are the broker's (with any namespace prefix).
   */
  async uncommitted(groupId: string, topic: string): Promise<number> {
    return this.admin.use('reading committed offsets', this.options.healthTimeoutMs ?? 10000, async (admin) => {
      const [ends, committed] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
      const committedOf = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      return ends.reduce((sum, { partition, high, low }) => {
        const from = committedOf.get(partition) ?? -1;
        return sum + Math.max(0, Number(high) - (from >= 0 ? from : Number(low)));
      }, 0);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    this.subscriptions.clear();
    await Promise.all([this.producer.close(), this.admin.close()]);
  }

  /** Creates missing topics with our partition count, so nothing depends on broker auto-creation. */
  private async ensureTopics(topics: string[], force = false): Promise<void> {
    const missing = topics.filter((topic) => force || !this.ensuredTopics.has(topic));
    if (missing.length === 0 || this.closed) return;
    await this.admin.use('creating Kafka topics', 30000, (admin) =>
      admin.createTopics({ waitForLeaders: true, topics: missing.map((topic) => ({ topic, numPartitions: this.numPartitions })) }),
    );
    for (const topic of missing) this.ensuredTopics.add(topic);
  }
}

function toConsumed(topic: string, partition: number, message: KafkaMessage): ConsumedMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last !== undefined) headers[name] = last.toString();
  }
  return { topic, partition, offset: message.offset, key: message.key?.toString() ?? '', value: message.value?.toString() ?? '', headers };
}

/**
 * One kafkajs consumer in the group. A failing handler must get the same message again without the
 * partition moving on, and without stalling the group. We use eachBatch with manual resolveOffset:
 * kafkajs fetches a partition from its last *resolved* offset, so leaving the failed message
 * unresolved and pausing the partition for the back-off makes the next fetch start at that very
 * message. Offsets are resolved (and later committed) only after `handle` resolved. Retrying inside
 * the handler instead would hold the whole fetch loop (every partition) and need its own stop and
 * rebalance plumbing; throwing would make kafkajs retry on its own schedule and then restart the
 * consumer, rebalancing the whole group. A pause is local to this partition, dropped with it on a
 * rebalance (the next owner starts at the committed offset, i.e. the failed message) and survives
 * heartbeats untouched.
 */
class KafkaSubscription {
  private consumer: Consumer | undefined;
  private stopping = false;
  private readonly retries = new Map<string, { offset: string; delayMs: number }>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private recoveryDelayMs = RETRY_BACKOFF_MS.initial;

  constructor(
    private readonly kafka: Kafka,
    readonly options: SubscribeOptions,
    private readonly logger: Logger,
    private readonly concurrency: number,
    private readonly ensureTopics: (force: boolean) => Promise<void>,
  ) {}

  /** Resolves once the consumer has joined its group and received its partitions. */
  async start(joinTimeoutMs: number): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      // A member that died (a killed process, a broker restart) is given up after 10 s rather than
      // kafkajs's 30 s, so its partitions move on sooner; batches heartbeat well within that.
      sessionTimeout: 10_000,
      heartbeatInterval: 3000,
      allowAutoTopicCreation: false,
      // Also how long a fetch waits when every assigned partition is paused for a back-off.
      maxWaitTimeInMs: 1000,
      retry: {
        ...CLIENT_RETRY,
        // A replaced cluster (or a deleted topic) would otherwise leave the consumer restarting forever.
        restartOnFailure: async () => {
          await this.ensureTopics(true).catch(() => undefined);
          return true;
        },
      },
    });
    this.consumer = consumer;
    const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) this.recover(consumer, payload.error);
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: this.options.topics, fromBeginning: true });
      await consumer.run({
        partitionsConsumedConcurrently: this.options.partitionsConcurrently ?? this.concurrency,
        eachBatchAutoResolve: false,
        autoCommitInterval: 1000,
        eachBatch: (payload) => this.eachBatch(payload),
      });
      if (joinTimeoutMs > 0) await withTimeout(joined, joinTimeoutMs, `joining consumer group ${this.options.groupId}`);
      // stop() may have run while a recovery was starting this consumer.
      if (this.stopping) await consumer.disconnect();
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.consumer?.disconnect().catch((error: unknown) => this.logger.warn({ err: error }, 'kafka consumer did not disconnect cleanly'));
  }

  private async eachBatch({ batch, resolveOffset, heartbeat, pause, isRunning, isStale, commitOffsetsIfNecessary }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    const size = this.options.handleBatch ? (this.options.maxBatchSize ?? 500) : 1;
    for (let start = 0; start < batch.messages.length; start += size) {
      if (this.stopping || !isRunning() || isStale()) return;
      const messages = batch.messages.slice(start, start + size);
      try {
        await deliver(this.options, messages.map((message) => toConsumed(topic, partition, message)));
      } catch (error) {
        this.retryLater(topic, partition, messages[0].offset, error, pause);
        return;
      }
      this.retries.delete(`${topic}/${partition}`);
      resolveOffset(messages[messages.length - 1].offset);
      await commitOffsetsIfNecessary();
      // Throws when the group rebalances; kafkajs then rejoins and refetches from the resolved offset.
      await heartbeat();
    }
  }

  private retryLater(topic: string, partition: number, offset: string, error: unknown, pause: () => () => void): void {
    const key = `${topic}/${partition}`;
    const previous = this.retries.get(key);
    const delayMs = previous?.offset === offset ? nextBackoff(previous.delayMs) : RETRY_BACKOFF_MS.initial;
    this.retries.set(key, { offset, delayMs });
    this.logger.warn({ err: error, topic, partition, offset, groupId: this.options.groupId, retryInMs: delayMs }, 'event handler failed; redelivering');
    const resume = pause();
    // After a restart the consumer's new group state is not paused, so a failing resume is moot.
    this.later(delayMs, async () => resume());
  }

  private later(delayMs: number, work: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      work().catch(() => undefined);
    }, delayMs);
    this.timers.add(timer);
  }

  /** kafkajs gives up on errors it deems permanent; a subscription must not die silently. */
  private recover(crashed: Consumer, error: unknown): void {
    if (this.stopping || crashed !== this.consumer) return;
    const delayMs = this.recoveryDelayMs;
    this.recoveryDelayMs = nextBackoff(delayMs);
    this.logger.error({ err: error, groupId: this.options.groupId, retryInMs: delayMs }, 'kafka consumer crashed; starting a new one');
    this.later(delayMs, async () => {
      if (this.stopping) return;
      try {
        await this.start(0);
        this.recoveryDelayMs = RETRY_BACKOFF_MS.initial;
      } catch (restartError) {
        if (this.consumer) this.recover(this.consumer, restartError);
      }
    });
  }
}
