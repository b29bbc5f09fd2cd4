/**
 * A subscription on Kafka: one kafkajs consumer in its group, delivering batches to the handler,
 * redelivering what failed, and replaced when it stalls or stops on an error.
 */
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '../../logger';
import type { ConsumedMessage, SubscribeOptions } from '../bus';
import { RETRY_BACKOFF_MS, deliver, nextBackoff } from '../bus';
import { totalBehind, type GroupMember, type PartitionLag } from './admin';
import { CLIENT_RETRY, withTimeout } from './connection';
import { consumerStopIsPassing } from './errors';

/** See KafkaBusOptions.stallTimeoutMs (bus.ts). A fetch starts at least every `maxWaitTimeInMs` while a consumer is healthy. */
export const DEFAULT_STALL_TIMEOUT_MS = 60_000;
/** How long a stalled consumer is given to leave its group before its replacement starts anyway. */
const STALLED_DISCONNECT_TIMEOUT_MS = 5000;
/** Past kafkajs's rebalance timeout (60 s): how long a disconnect waits for a join in progress to end. */
const JOIN_SETTLE_TIMEOUT_MS = 90_000;

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
 * idempotence absorbs what the stuck one may still finish. A partition that no member holds is
 * nobody's to watch, so every consumer also looks at its group's other partitions (checkProgress).
 */
export class KafkaSubscription {
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
  /** The id the group gave the current consumer at its last join, and when. */
  private memberId: string | undefined;
  private joinedAt = 0;
  /** Per partition of the group's topics not assigned to this consumer: where the group's commit stood when last seen moving. */
  private readonly groupProgress = new Map<string, { committed: number; since: number }>();
  /** Whether the last read of the group's offsets failed, so a run of failures is told once. */
  private lagUnreadable = false;
  /** Consumers kafkajs is joining to the group (a first start, or its own restart after a crash), each with who waits for that join to end. */
  private readonly joining = new Map<Consumer, (() => void)[]>();
  /** Who waits for the subscription's current consumer, whichever it is, to join its group. */
  private joinWaiters: (() => void)[] = [];

  constructor(
    private readonly kafka: Kafka,
    readonly options: SubscribeOptions,
    private readonly logger: Logger,
    private readonly limits: { concurrency: number; stallTimeoutMs: number },
    private readonly ensureTopics: (force: boolean) => Promise<void>,
    private readonly lag: (topic: string) => Promise<PartitionLag[]>,
    private readonly holders: () => Promise<{ state: string; members: GroupMember[] }>,
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
      this.joinEnded(consumer);
      if (consumer !== this.consumer) return;
      for (const resolve of this.joinWaiters.splice(0)) resolve();
      this.memberId = payload.memberId;
      this.joinedAt = Date.now();
      this.groupProgress.clear();
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
    // Whichever consumer joins: one that crashes on its first join is replaced by recover().
    const joined = joinTimeoutMs > 0 ? new Promise<void>((resolve) => this.joinWaiters.push(resolve)) : undefined;
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      // A crash ends a join; kafkajs restarts the consumer after a pause with a join of its own (a
      // disconnect before then cancels it), or else recover() replaces it.
      this.joinEnded(consumer);
      if (payload.restart) this.joinStarted(consumer);
      else this.recover(consumer, payload.error);
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: this.options.topics, fromBeginning: this.options.fromBeginning ?? true });
      this.joinStarted(consumer);
      // Resolves once kafkajs's first join ended, joined or crashed (each of which its event tells).
      await consumer
        .run({
          partitionsConsumedConcurrently: this.options.partitionsConcurrently ?? this.limits.concurrency,
          eachBatchAutoResolve: false,
          autoCommitInterval: 1000,
          eachBatch: (payload) => this.eachBatch(payload),
        })
        .catch((error: unknown) => {
          this.joinEnded(consumer);
          throw error;
        });
      if (joined) await withTimeout(joined, joinTimeoutMs, `joining consumer group ${this.options.groupId}`);
      // stop() may have run while a recovery was starting this consumer.
      if (this.stopping) await this.disconnect(consumer);
    } catch (error) {
      await this.disconnect(consumer).catch(() => undefined);
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.watchdog);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.consumer) await this.disconnect(this.consumer).catch((error: unknown) => this.logger.warn({ err: error }, 'kafka consumer did not disconnect cleanly'));
  }

  /**
   * Disconnects `consumer` once no join of kafkajs's is in progress for it. kafkajs's disconnect
   * during a join finds its runner not yet running, so it stops nothing and forgets the runner; the
   * join then completes and the runner fetches and heartbeats for good, a member that nothing can
   * stop and that holds its partitions, handing their messages to a subscription that has let go
   * of it. A join ends within the group's rebalance timeout; past a longer bound, the consumer is
   * disconnected anyway.
   */
  private async disconnect(consumer: Consumer): Promise<void> {
    const waiters = this.joining.get(consumer);
    if (waiters) {
      const ended = new Promise<void>((resolve) => waiters.push(resolve));
      await withTimeout(ended, JOIN_SETTLE_TIMEOUT_MS, 'waiting for a kafka consumer to end its join').catch((error: unknown) =>
        this.logger.warn({ err: error, groupId: this.options.groupId }, 'disconnecting a kafka consumer that is still joining its group'),
      );
    }
    await consumer.disconnect();
    // A restart kafkajs had planned after a crash is cancelled by the disconnect.
    this.joinEnded(consumer);
  }

  private joinStarted(consumer: Consumer): void {
    if (!this.joining.has(consumer)) this.joining.set(consumer, []);
  }

  /** Waiters go on after the microtasks that follow the event, in which kafkajs marks the runner running. */
  private joinEnded(consumer: Consumer): void {
    const waiters = this.joining.get(consumer);
    this.joining.delete(consumer);
    for (const resolve of waiters ?? []) setImmediate(resolve);
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
            .then(() => (this.lagUnreadable = false))
            .catch((error: unknown) => {
              // A watch that cannot read the group's offsets watches nothing: said once per run of failures.
              if (!this.lagUnreadable) this.logger.warn({ err: error, groupId: this.options.groupId }, 'could not read the consumer group offsets to watch its progress');
              this.lagUnreadable = true;
            })
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
   *
   * The group's other partitions are watched too, by their committed offsets: one with readable
   * messages whose commit has not moved for twice as long is looked up in the broker's description
   * of the group. Held by no member (an assignment that left it out) or by this very member (one
   * this consumer does not know it holds), only a new assignment brings it back, so this consumer is
   * replaced, which makes the group rebalance. One held by another member is that member's to watch,
   * and a group that is rebalancing, or has been for less than that long, is left to settle.
   */
  private async checkProgress(consumer: Consumer): Promise<void> {
    const stuck: string[] = [];
    const unowned: string[] = [];
    for (const topic of this.options.topics) {
      const partitions = await this.lag(topic);
      this.options.onLag?.(topic, totalBehind(partitions));
      if (consumer !== this.consumer) return;
      const now = Date.now();
      for (const { partition, committed, readableEnd, behind } of partitions) {
        const key = `${topic}/${partition}`;
        if (!this.assigned.has(key)) {
          const seen = this.groupProgress.get(key);
          if (behind <= 0 || !seen || seen.committed !== committed) this.groupProgress.set(key, { committed, since: now });
          else if (now - seen.since >= 2 * this.limits.stallTimeoutMs) unowned.push(`${key}@${committed}<${readableEnd}`);
          continue;
        }
        this.groupProgress.delete(key);
        const read = this.positions.get(key);
        const position = Math.max(committed, read ?? -1);
        const waiting = read === undefined ? behind : readableEnd - position;
        const seen = this.progress.get(key);
        if (waiting <= 0 || this.retries.has(key) || !seen || seen.position !== position) this.progress.set(key, { position, since: now });
        else if (now - seen.since >= this.limits.stallTimeoutMs) stuck.push(`${key}@${position}<${readableEnd}`);
      }
    }
    // Only a group that has stayed as it is can be told to hold a partition: while members come and
    // go, partitions are unheld between assignments.
    const settled = Date.now() - this.joinedAt >= 2 * this.limits.stallTimeoutMs;
    if (stuck.length === 0 && unowned.length > 0 && settled) stuck.push(...(await this.heldByNobodyElse(unowned)));
    if (stuck.length > 0 && consumer === this.consumer && !this.replacing && !this.stopping) this.replace(consumer, { notMovingOn: stuck });
  }

  /** Of `partitions` (`topic/partition@committed<end`), those no member of the group holds, or this consumer's member does. */
  private async heldByNobodyElse(partitions: string[]): Promise<string[]> {
    const { state, members } = await this.holders();
    if (state !== 'Stable') return [];
    const holder = (key: string) =>
      members.find(({ assignment }) => {
        const slash = key.lastIndexOf('/');
        return (assignment[key.slice(0, slash)] ?? []).includes(Number(key.slice(slash + 1)));
      });
    return partitions.filter((stuck) => {
      const owner = holder(stuck.slice(0, stuck.indexOf('@')));
      return !owner || owner.memberId === this.memberId;
    });
  }

  private replace(stalled: Consumer, why: { silentForMs: number } | { notMovingOn: string[] }): void {
    this.replacing = true;
    this.logger.error({ groupId: this.options.groupId, topics: this.options.topics, ...why }, 'kafka consumer stalled; replacing it');
    void (async () => {
      // A handler that never returns keeps kafkajs from finishing the disconnect; the group then
      // drops the stalled member after its session timeout and hands its partitions over.
      await withTimeout(this.disconnect(stalled), STALLED_DISCONNECT_TIMEOUT_MS, 'disconnecting a stalled consumer').catch(() => undefined);
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
