/**
 * The full setup's event bus on Kafka: publishes go through a transactional producer (producer.ts),
 * each subscription is a consumer of its own (subscription.ts), and topics, offsets and health are
 * the admin API's (admin.ts), all on one kafkajs client that logs through our logger (log.ts).
 */
import { Kafka } from 'kafkajs';
import type { Logger } from '../../logger';
import type { BusMessage, EventBus, PublishOptions, SubscribeOptions, Subscription } from '../bus';
import { KafkaAdmin, totalBehind, type GroupMember, type PartitionLag } from './admin';
import { CLIENT_RETRY } from './connection';
import { kafkaLogCreator, kafkaLogLevel } from './log';
import { TransactionalProducer } from './producer';
import { DEFAULT_STALL_TIMEOUT_MS, KafkaSubscription } from './subscription';

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
   * process restarts. A partition of the group that no member holds, with readable messages and a
   * commit that has not moved for twice as long, also replaces it, so that the group rebalances.
   */
  stallTimeoutMs?: number;
  healthTimeoutMs?: number;
}

export class KafkaBus implements EventBus {
  readonly kind = 'kafka' as const;
  private readonly kafka: Kafka;
  private readonly logger: Logger;
  private readonly numPartitions: number;
  private readonly admin: KafkaAdmin;
  private readonly producer: TransactionalProducer;
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
      logLevel: kafkaLogLevel(this.logger),
      logCreator: kafkaLogCreator(this.logger),
    });
    this.admin = new KafkaAdmin(this.kafka, { logger: this.logger, numPartitions: this.numPartitions, healthTimeoutMs: options.healthTimeoutMs, closed: () => this.closed });
    this.producer = new TransactionalProducer(this.kafka, this.admin, options);
  }

  async publish(messages: BusMessage[], options: PublishOptions = {}): Promise<void> {
    if (this.closed) throw new Error('The event bus is closed');
    if (messages.length === 0) return;
    await this.producer.publish(messages, options);
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (this.closed) throw new Error('The event bus is closed');
    // kafkajs's group leader assigns only the topics it subscribed itself: a member of the same group
    // on other topics would silently never get their partitions.
    const topicSet = (topics: string[]) => [...new Set(topics)].sort().join(',');
    const clash = [...this.subscriptions].find((s) => s.options.groupId === options.groupId && topicSet(s.options.topics) !== topicSet(options.topics));
    if (clash) throw new Error(`Consumer group ${options.groupId} already subscribes ${topicSet(clash.options.topics)}; one Kafka group must subscribe the same topics everywhere`);
    await this.admin.ensureTopics(options.topics);
    // close() may have run while the topics were being created; it would not know this subscription.
    if (this.closed) throw new Error('The event bus is closed');
    const subscription = new KafkaSubscription(
      this.kafka,
      options,
      this.logger,
      { concurrency: this.numPartitions, stallTimeoutMs: this.options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS },
      (force) => this.admin.ensureTopics(options.topics, force),
      (topic) => this.partitionLag(options.groupId, topic),
      () => this.groupMembers(options.groupId),
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
    await this.admin.health();
  }

  /**
   * Messages of `topic` past the offsets `groupId` committed, over all partitions (a partition it
   * never committed on counts whole): 0 once a consumer that applied everything stopped cleanly.
   * For operators and tests; the names are the broker's (with any namespace prefix).
   */
  async uncommitted(groupId: string, topic: string): Promise<number> {
    return totalBehind(await this.partitionLag(groupId, topic));
  }

  /**
   * Per partition of `topic`: the offset `groupId` committed (-1: none yet), the end read-committed
   * readers can see (the last stable offset: an open transaction hides what follows it) and how far
   * the group is behind it.
   */
  async partitionLag(groupId: string, topic: string): Promise<PartitionLag[]> {
    return this.admin.partitionLag(groupId, topic);
  }

  /**
   * The members of consumer group `groupId` and the partitions each was given: which process holds a
   * partition that does not move on. For operators and tests.
   */
  async groupMembers(groupId: string): Promise<{ state: string; members: GroupMember[] }> {
    return this.admin.groupMembers(groupId);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    this.subscriptions.clear();
    await Promise.all([this.producer.close(), this.admin.close()]);
  }
}
