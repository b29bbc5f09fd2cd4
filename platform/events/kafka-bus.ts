/**
 * The full setup's bus: Kafka through kafkajs. This is the only file that imports kafkajs, so the
 * client can be swapped without touching a service.
 *
 * A publish is one Kafka transaction (a transactional id per bus, reused by the producer that
 * replaces a failed one): a process killed while its batch is on the way leaves an open
 * transaction, which the broker aborts after `transactionTimeoutMs` (or at once when this bus's
 * next producer starts), and our consumers read committed messages only. So when the outbox relay
 * of a dead replica never saw the broker's acknowledgement, the copy that another relay publishes is
 * the only one consumers ever see. Publishes of one bus are made one at a time.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, Partitioners, logLevel as KafkaLogLevel } from 'kafkajs';
import type { Admin, Consumer, EachBatchPayload, KafkaMessage, LogEntry, Producer } from 'kafkajs';
import type { Logger } from '../logger';
import type { BusMessage, ConsumedMessage, EventBus, PublishOptions, SubscribeOptions, Subscription } from './bus';
import { PUBLISHER, PUBLISHER_HEADER, RETRY_BACKOFF_MS, deliver, nextBackoff } from './bus';

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /** Partitions of the topics this bus creates. */
  numPartitions?: number;
  /** A publish rejects after this long, so the outbox relay backs off instead of hanging. */
  publishTimeoutMs?: number;
  /** How long the broker keeps the transaction of a publisher that vanished before aborting it (default 10 s). */
  transactionTimeoutMs?: number;
  /** How long `subscribe()` waits for the consumer to join its group. */
  joinTimeoutMs?: number;
  /**
   * How long a consumer may go without a sign of life (a fetch started, a group joined), or hold a
   * partition with readable messages without moving on it, before it is replaced by a new one
   * (default 60 s): a handler that never returns, a fetch loop that ended without a crash, or a
   * partition kafkajs keeps but no longer fetches would otherwise hold its events back until the
   * process restarts.
   */
  stallTimeoutMs?: number;
  healthTimeoutMs?: number;
}

// Bounded everywhere: a client that retried forever would hide an outage from the relay's back-off.
const CLIENT_RETRY = { retries: 5, initialRetryTime: 100, maxRetryTime: 2000, factor: 0.2, multiplier: 2 };
// The transaction coordinator answers CONCURRENT_TRANSACTIONS to a batch that follows the previous
// commit too closely (its markers are still being written): retried after 100 ms, that would cost
// each batch a tenth of a second. Shorter first pauses, more of them: about as long in all (4.5 s).
const PRODUCER_RETRY = { retries: 8, initialRetryTime: 20, maxRetryTime: 2000, factor: 0.2, multiplier: 2 };

const { DEBUG, INFO, WARN, ERROR, NOTHING } = KafkaLogLevel;
const KAFKA_LEVELS: Record<string, KafkaLogLevel> = { trace: DEBUG, debug: DEBUG, info: INFO, warn: WARN, error: ERROR, fatal: ERROR, silent: NOTHING };
const PINO_METHODS = { [ERROR]: 'error', [WARN]: 'warn', [INFO]: 'info', [DEBUG]: 'debug', [NOTHING]: 'debug' } as const;

/** kafkajs logs through our pino logger, tagged with the kafkajs component that spoke. */
/** The broker's answers that only mean "not yet" (kafkajs retries them) or "already done". */
// kafkajs keeps its table of protocol errors (code, message, retriable) in a module it does not re-export.
const { errorCodes } = require('kafkajs/src/protocol/error') as { errorCodes: { message: string; retriable: boolean }[] };
const PASSING_KAFKA_ERRORS = new Set([...errorCodes.filter((code) => code.retriable).map((code) => code.message), 'Topic with this name already exists']);

/** kafkajs's producer reports a send it is about to retry with the broker's message after this. */
const RETRIED_SEND = 'Failed to send messages: ';

export function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, logger: _name, ...fields } = log as { message: string; [key: string]: unknown };
      // We limit the idempotent producer's retries on purpose (see publish) and the consumers are
      // idempotent, so kafkajs's exactly-once warning is noise. A request answered with an error
      // kafkajs retries (a topic not served yet, a concurrent transaction step, also when the
      // producer reports it as a failed send it retries), or told that a topic exists already, is
      // not a failure of ours: it is logged, but not at error level. A send that runs out of retries
      // fails the publish, and the outbox relay logs that.
      const reported = typeof fields.error === 'string' ? fields.error : message.startsWith(RETRIED_SEND) ? message.slice(RETRIED_SEND.length) : message;
      const transient = level === ERROR && (PASSING_KAFKA_ERRORS.has(reported) || isPassingCrash(message));
      const method = message.startsWith('Limiting retries for the idempotent producer') ? 'debug' : transient ? 'warn' : PINO_METHODS[level];
      logger[method]({ kafka: namespace, ...fields }, message);
    };
}

/**
 * kafkajs names every failed coordinator lookup `KafkaJSGroupCoordinatorNotFound` and drops the cause
 * (a coordinator still loading, a request that timed out on a busy broker); it is not a mistake of
 * ours, and a consumer that stopped on it is started again (KafkaSubscription.recover).
 */
const PASSING_KAFKA_ERROR_NAMES = [
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSBrokerNotFound',
  'KafkaJSRequestTimeoutError',
  'KafkaJSLockTimeout',
  'KafkaJSGroupCoordinatorNotFound',
];

/** kafkajs's own line for a consumer that stopped (`Crash: <name>: <message>`), when the error only means "not now". */
function isPassingCrash(message: string): boolean {
  return message.startsWith('Crash: ') && PASSING_KAFKA_ERROR_NAMES.includes(message.slice('Crash: '.length).split(':')[0]);
}

/**
 * True when a kafkajs error says the cluster is not ready yet rather than that we asked something
 * wrong: a broker refusing connections, a coordinator still loading, a topic whose partitions are
 * still being created (`This server does not host this topic-partition`), or kafkajs giving up
 * retrying one of those. Also our own time-outs of a join or a request.
 */
export function isRetriableKafkaError(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const { name, retriable } = current as Error & { retriable?: boolean };
    if (name.startsWith('KafkaJS') && retriable === true) return true;
    if (PASSING_KAFKA_ERROR_NAMES.includes(name)) return true;
    if (current instanceof KafkaTimeoutError) return true;
    current = (current as { cause?: unknown; originalError?: unknown }).cause ?? (current as { originalError?: unknown }).originalError;
  }
  return false;
}

/** How many recoveries in a row a passing error may cause before the stop is reported as an error. */
export const PASSING_RECOVERIES = 3;

/** Whether a consumer's stop, the `recoveries`-th in a row, is a passing one (a warning) rather than a crash (an error). */
export function consumerStopIsPassing(error: unknown, recoveries: number): boolean {
  return recoveries <= PASSING_RECOVERIES && isRetriableKafkaError(error);
}

/**
 * A topic that exists, or is being created, but whose partitions no broker serves yet. Other
 * retriable errors (a broker that refuses connections) are the start-up's to wait out (platform/run.ts).
 */
function isTopicNotServedYet(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const { type } = current as Error & { type?: string };
    if (type === 'UNKNOWN_TOPIC_OR_PARTITION' || type === 'LEADER_NOT_AVAILABLE') return true;
    current = (current as { cause?: unknown; originalError?: unknown }).cause ?? (current as { originalError?: unknown }).originalError;
  }
  return false;
}

/** See KafkaBusOptions.stallTimeoutMs. A fetch starts at least every `maxWaitTimeInMs` while a consumer is healthy. */
const DEFAULT_STALL_TIMEOUT_MS = 60_000;
/** How long a stalled consumer is given to leave its group before its replacement starts anyway. */
const STALLED_DISCONNECT_TIMEOUT_MS = 5000;

/** How long creating topics (and waiting for them to be served) may take. */
const TOPIC_CREATION_TIMEOUT_MS = 30000;

/** One partition of a topic as a consumer group sees it (KafkaBus.partitionLag). */
export interface PartitionLag {
  partition: number;
  /** The offset the group committed; -1: none yet. */
  committed: number;
  /** The last stable offset: what read-committed readers can reach. */
  readableEnd: number;
  /** Messages between the two (from the log's start when nothing is committed). */
  behind: number;
}

/** A Kafka operation that did not finish within its bound. */
export class KafkaTimeoutError extends Error {}

async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new KafkaTimeoutError(`${what} timed out after ${ms} ms`)), ms)));
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
  private publishing: Promise<unknown> = Promise.resolve();

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
    const transactionalId = `${options.clientId}-${randomUUID()}`;
    this.producer = new Reconnecting(() =>
      this.kafka.producer({
        transactionalId,
        transactionTimeout: options.transactionTimeoutMs ?? 10_000,
        idempotent: true,
        // One request in flight per broker keeps the order per key even across retries.
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: PRODUCER_RETRY,
      }),
    );
    this.admin = new Reconnecting(() => this.kafka.admin({ retry: CLIENT_RETRY }));
  }

  async publish(messages: BusMessage[], options: PublishOptions = {}): Promise<void> {
    if (this.closed) throw new Error('The event bus is closed');
    if (messages.length === 0) return;
    const byTopic = new Map<string, BusMessage[]>();
    for (const message of messages) {
      const list = byTopic.get(message.topic);
      if (list) list.push(message);
      else byTopic.set(message.topic, [message]);
    }
    const topicMessages = [...byTopic].map(([topic, list]) => ({
      topic,
      messages: list.map(({ key, value, headers }) => ({ key, value, headers: { ...headers, [PUBLISHER_HEADER]: PUBLISHER } })),
    }));
    const turn = this.publishing.then(() =>
      this.producer.use('publishing to Kafka', this.options.publishTimeoutMs ?? 30000, async (producer) => {
        await this.ensureTopics([...byTopic.keys()]);
        const transaction = await producer.transaction();
        try {
          await transaction.sendBatch({ acks: -1, topicMessages });
          await options.beforeCommit?.();
          await transaction.commit();
        } catch (error) {
          await transaction.abort().catch(() => undefined);
          throw error;
        }
      }),
    );
    this.publishing = turn.catch(() => undefined);
    try {
      await turn;
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
    // close() may have run while the topics were being created; it would not know this subscription.
    if (this.closed) throw new Error('The event bus is closed');
    const subscription = new KafkaSubscription(
      this.kafka,
      options,
      this.logger,
      { concurrency: this.numPartitions, stallTimeoutMs: this.options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS },
      (force) => this.ensureTopics(options.topics, force),
      (topic) => this.partitionLag(options.groupId, topic),
    );
    // Known before it has joined, so that close() stops one still joining too (a start that failed
    // elsewhere and closes the bus must not leave a consumer behind).
    this.subscriptions.add(subscription);
    try {
      await subscription.start(this.options.joinTimeoutMs ?? 60000);
    } catch (error) {
      // Stopped, not only forgotten: its watch would otherwise start a new consumer later, one that
      // nobody can stop and that applies messages with whatever the failed start left behind (a
      // closed database, when the service's start is retried).
      this.subscriptions.delete(subscription);
      await subscription.stop();
      throw error;
    }
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
    return (await this.partitionLag(groupId, topic)).reduce((sum, { behind }) => sum + behind, 0);
  }

  /**
   * Per partition of `topic`: the offset `groupId` committed (-1: none yet), the end read-committed
   * readers can see (the last stable offset: an open transaction hides what follows it) and how far
   * the group is behind it.
   */
  async partitionLag(groupId: string, topic: string): Promise<PartitionLag[]> {
    return this.admin.use('reading committed offsets', this.options.healthTimeoutMs ?? 10000, async (admin) => {
      const [ends, committed] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
      const committedOf = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      return ends
        .map(({ partition, high, low }) => {
          const from = committedOf.get(partition) ?? -1;
          return { partition, committed: from, readableEnd: Number(high), behind: Math.max(0, Number(high) - (from >= 0 ? from : Number(low))) };
        })
        .sort((a, b) => a.partition - b.partition);
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
    // Topics created a moment ago (by this process or a neighbour) may not be served yet: kafkajs's
    // wait for their leaders gives up on `This server does not host this topic-partition`, which
    // only means "not yet". Such errors are waited out here, within the same bound.
    const deadline = Date.now() + TOPIC_CREATION_TIMEOUT_MS;
    for (let delayMs = RETRY_BACKOFF_MS.initial; ; delayMs = nextBackoff(delayMs)) {
      try {
        await this.admin.use('creating Kafka topics', Math.max(1000, deadline - Date.now()), (admin) =>
          admin.createTopics({ waitForLeaders: true, topics: missing.map((topic) => ({ topic, numPartitions: this.numPartitions })) }),
        );
        break;
      } catch (error) {
        if (this.closed || !isTopicNotServedYet(error) || Date.now() + delayMs > deadline) throw error;
        this.logger.warn({ topics: missing, error: (error as Error).message, retryInMs: delayMs }, 'Kafka topics not ready yet; retrying');
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
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
 *
 * kafkajs starts a fetch at least every `maxWaitTimeInMs` while it runs, after the previous fetch's
 * batches are handled. A consumer that shows no sign of life (a fetch, a join, a rebalance, a
 * restart) for `stallTimeoutMs` is stuck: in a handler that never returns or in a fetch loop that
 * ended. So is one that keeps fetching but, for as long, neither reads nor commits on a partition
 * assigned to it while that partition has readable messages and no handler failure is being retried
 * on it: kafkajs holds the partition, so no other member of the group gets it. Either way it is
 * disconnected and replaced; its partitions resume at the committed offsets, and the handlers'
 * idempotence absorbs what the stuck one may still finish.
 */
class KafkaSubscription {
  private consumer: Consumer | undefined;
  private stopping = false;
  private readonly retries = new Map<string, { offset: string; delayMs: number }>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private recoveryDelayMs = RETRY_BACKOFF_MS.initial;
  /** Recoveries since the consumer last started cleanly. */
  private recoveries = 0;
  private lastSignOfLife = Date.now();
  private watchdog: NodeJS.Timeout | undefined;
  private replacing = false;
  /** The partitions the group gave the current consumer, as `topic/partition`. */
  private assigned = new Set<string>();
  /** Per assigned partition: the next offset this consumer will read, as far as it got. */
  private readonly positions = new Map<string, number>();
  /** Per assigned partition with readable messages: where it stood when last seen moving. */
  private readonly progress = new Map<string, { position: number; since: number }>();
  private checkingProgress = false;

  constructor(
    private readonly kafka: Kafka,
    readonly options: SubscribeOptions,
    private readonly logger: Logger,
    private readonly limits: { concurrency: number; stallTimeoutMs: number },
    private readonly ensureTopics: (force: boolean) => Promise<void>,
    private readonly lag: (topic: string) => Promise<PartitionLag[]>,
  ) {}

  /** Resolves once the consumer has joined its group and received its partitions. */
  async start(joinTimeoutMs: number): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      // A member that died (a killed process, a broker restart) is given up after 10 s rather than
      // kafkajs's 30 s, so its partitions move on sooner; batches heartbeat well within that.
      sessionTimeout: 10_000,
      heartbeatInterval: 3000,
      // kafkajs fetches each partition from the leader its cached metadata names; metadata read while
      // a new topic's partitions were still being set up would otherwise stand for 5 minutes.
      metadataMaxAge: 30_000,
      allowAutoTopicCreation: false,
      // Also how long a fetch waits when every assigned partition is paused for a back-off.
      maxWaitTimeInMs: 1000,
      ...(this.options.maxBytesPerPartition
        ? { maxBytesPerPartition: this.options.maxBytesPerPartition, maxBytes: Math.max(10 << 20, 4 * this.options.maxBytesPerPartition) }
        : {}),
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
    this.lastSignOfLife = Date.now();
    // A new consumer is watched from its own start.
    this.progress.clear();
    for (const event of [consumer.events.FETCH_START, consumer.events.GROUP_JOIN, consumer.events.REBALANCING, consumer.events.CRASH]) {
      consumer.on(event, () => {
        if (consumer === this.consumer) this.lastSignOfLife = Date.now();
      });
    }
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      if (consumer !== this.consumer) return;
      this.assigned = new Set(Object.entries(payload.memberAssignment).flatMap(([topic, partitions]) => partitions.map((partition) => `${topic}/${partition}`)));
      // A partition the group gives back to this consumer keeps its watch: a group that rebalances
      // more often than the stall timeout must not hide a partition this consumer never reads.
      for (const key of [...this.progress.keys()]) if (!this.assigned.has(key)) this.progress.delete(key);
      this.positions.clear();
    });
    // A fetch that brought only control records or aborted messages never reaches eachBatch; kafkajs
    // moves past it on its own and says so here.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (consumer === this.consumer && payload.batchSize === 0) this.positions.set(`${payload.topic}/${payload.partition}`, Number(payload.lastOffset) + 1);
    });
    this.watch();
    const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) this.recover(consumer, payload.error);
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: this.options.topics, fromBeginning: true });
      await consumer.run({
        partitionsConsumedConcurrently: this.options.partitionsConcurrently ?? this.limits.concurrency,
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
    clearInterval(this.watchdog);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.consumer?.disconnect().catch((error: unknown) => this.logger.warn({ err: error }, 'kafka consumer did not disconnect cleanly'));
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const { topic, partition } = batch;
    const size = this.options.handleBatch ? (this.options.maxBatchSize ?? 500) : 1;
    for (let start = 0; start < batch.messages.length; start += size) {
      if (this.stopping || !payload.isRunning() || payload.isStale()) return;
      const messages = batch.messages.slice(start, start + size);
      try {
        await deliver(
          this.options,
          messages.map((message) => toConsumed(topic, partition, message)),
        );
      } catch (error) {
        this.retryLater(topic, partition, messages[0].offset, error, () => payload.pause());
        return;
      }
      this.retries.delete(`${topic}/${partition}`);
      payload.resolveOffset(messages[messages.length - 1].offset);
      // Resolving a batch's last message also passes the control records after it.
      const last = start + size >= batch.messages.length ? batch.lastOffset() : messages[messages.length - 1].offset;
      this.positions.set(`${topic}/${partition}`, Number(last) + 1);
      await payload.commitOffsetsIfNecessary();
      // Throws when the group rebalances; kafkajs then rejoins and refetches from the resolved offset.
      await payload.heartbeat();
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

  private watch(): void {
    if (this.watchdog) return;
    const { stallTimeoutMs } = this.limits;
    this.watchdog = setInterval(
      () => {
        const silentForMs = Date.now() - this.lastSignOfLife;
        if (this.stopping || this.replacing || !this.consumer) return;
        if (silentForMs >= stallTimeoutMs) this.replace(this.consumer, { silentForMs });
        else if (!this.checkingProgress) {
          this.checkingProgress = true;
          this.checkProgress(this.consumer)
            .catch((error: unknown) => this.logger.debug({ err: error, groupId: this.options.groupId }, 'could not read the consumer group offsets'))
            .finally(() => (this.checkingProgress = false));
        }
      },
      Math.max(100, stallTimeoutMs / 4),
    );
    this.watchdog.unref();
  }

  /**
   * Replaces `consumer` when a partition assigned to it has had readable messages, no handler failure
   * in retry, and no move of its position (what the consumer read, or the group committed) for
   * `stallTimeoutMs`. The readable end is the last stable offset, so a transaction still open on the
   * partition does not count as a stall.
   */
  private async checkProgress(consumer: Consumer): Promise<void> {
    const topics = new Set([...this.assigned].map((key) => key.slice(0, key.lastIndexOf('/'))));
    const stuck: string[] = [];
    for (const topic of topics) {
      const partitions = await this.lag(topic);
      if (consumer !== this.consumer) return;
      const now = Date.now();
      for (const { partition, committed, readableEnd, behind } of partitions) {
        const key = `${topic}/${partition}`;
        if (!this.assigned.has(key)) continue;
        const read = this.positions.get(key);
        const position = Math.max(committed, read ?? -1);
        const waiting = read === undefined ? behind : readableEnd - position;
        const seen = this.progress.get(key);
        if (waiting <= 0 || this.retries.has(key) || !seen || seen.position !== position) this.progress.set(key, { position, since: now });
        else if (now - seen.since >= this.limits.stallTimeoutMs) stuck.push(`${key}@${position}<${readableEnd}`);
      }
    }
    if (stuck.length > 0 && consumer === this.consumer && !this.replacing && !this.stopping) this.replace(consumer, { notMovingOn: stuck });
  }

  private replace(stalled: Consumer, why: { silentForMs: number } | { notMovingOn: string[] }): void {
    this.replacing = true;
    this.logger.error({ groupId: this.options.groupId, topics: this.options.topics, ...why }, 'kafka consumer stalled; replacing it');
    void (async () => {
      // A handler that never returns keeps kafkajs from finishing the disconnect; the group then
      // drops the stalled member after its session timeout and hands its partitions over.
      await withTimeout(stalled.disconnect(), STALLED_DISCONNECT_TIMEOUT_MS, 'disconnecting a stalled consumer').catch(() => undefined);
      if (this.stopping || stalled !== this.consumer) return;
      try {
        await this.start(0);
      } catch (error) {
        if (this.consumer) this.recover(this.consumer, error);
      }
    })().finally(() => (this.replacing = false));
  }

  /**
   * kafkajs gives up on errors it deems permanent; a subscription must not die silently. A consumer
   * that stopped on an error that only means "not now" (see isRetriableKafkaError) is started again
   * with a warning; an operator is called (an error line) for any other error, or when the same
   * kind keeps stopping it: after `PASSING_RECOVERIES` recoveries in a row.
   */
  private recover(crashed: Consumer, error: unknown): void {
    if (this.stopping || crashed !== this.consumer) return;
    const delayMs = this.recoveryDelayMs;
    this.recoveryDelayMs = nextBackoff(delayMs);
    this.recoveries += 1;
    const fields = { err: error, groupId: this.options.groupId, retryInMs: delayMs, recoveries: this.recoveries };
    if (consumerStopIsPassing(error, this.recoveries)) this.logger.warn(fields, 'kafka consumer stopped on a passing broker error; starting a new one');
    else this.logger.error(fields, 'kafka consumer crashed; starting a new one');
    this.later(delayMs, async () => {
      if (this.stopping) return;
      try {
        await this.start(0);
        this.recoveryDelayMs = RETRY_BACKOFF_MS.initial;
        this.recoveries = 0;
      } catch (restartError) {
        if (this.consumer) this.recover(this.consumer, restartError);
      }
    });
  }
}
