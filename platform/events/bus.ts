/**
 * The event bus every service gets: Kafka in the full setup, an in-process bus in the embedded one.
 * Delivery is at least once; consumers make it effectively once (see consumer.ts).
 */
import os from 'node:os';
import { runInContext } from '../request-context';

export interface BusMessage {
  topic: string;
  /** Messages with the same key keep their order. */
  key: string;
  value: string;
  headers?: Record<string, string>;
}

export interface ConsumedMessage extends BusMessage {
  partition: number;
  offset: string;
}

export interface SubscribeOptions {
  groupId: string;
  topics: string[];
  /**
   * Resolving commits the message; rejecting redelivers it after a back-off, so a handler rejects
   * only for passing faults (database down) and deals with bad messages itself.
   */
  handle?: (message: ConsumedMessage) => Promise<void>;
  /**
   * Instead of `handle`: several messages at once (in order per partition), committed or redelivered
   * together. For consumers whose work per message is small next to a transaction's cost.
   */
  handleBatch?: (messages: ConsumedMessage[]) => Promise<void>;
  /** Most messages per `handleBatch` call; default 500. */
  maxBatchSize?: number;
  /**
   * How many partitions one consumer works on at once (Kafka; default all). 1 for a consumer whose
   * batches lock the same rows, so that one instance never deadlocks with itself.
   */
  partitionsConcurrently?: number;
  /**
   * Most bytes one fetch brings from a partition (Kafka; default 1 MiB). Larger for a consumer that
   * applies a batch per transaction, so each transaction carries more events.
   */
  maxBytesPerPartition?: number;
  /**
   * Told, per topic, how many messages the group has not committed yet (over all the topic's
   * partitions), whenever the bus reads that (Kafka: each progress check, every 15 s by default).
   */
  onLag?: (topic: string, behind: number) => void;
  /**
   * Where a group without committed offsets starts: at the beginning of the topics (the default),
   * or, with false, at their end: only what is published from the subscription on (a live feed).
   */
  fromBeginning?: boolean;
}

/**
 * Hands messages to whichever handler the subscription has, outside any request's context: the
 * in-process bus delivers from the publisher's call, whose request is not the handler's business.
 */
export function deliver(options: SubscribeOptions, messages: ConsumedMessage[]): Promise<void> {
  return runInContext({}, async () => {
    if (options.handleBatch) {
      await options.handleBatch(messages);
      return;
    }
    if (!options.handle) throw new Error(`Subscription of group ${options.groupId} has no handler`);
    for (const message of messages) await options.handle(message);
  });
}

export interface PublishOptions {
  beforeCommit?: () => Promise<void>;
}

export interface Subscription {
  stop(): Promise<void>;
}

export interface EventBus {
  readonly kind: 'kafka' | 'memory';
  /**
   * Resolves once the broker has acknowledged every message. `beforeCommit`, when the bus has a
   * commit (Kafka's transaction), runs after the messages are sent and before they are committed;
   * if it throws, they are not. A bus without one, or a wrapper that drops it, never calls it.
   */
  publish(messages: BusMessage[], options?: PublishOptions): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  health(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Every bus adds a `publisher` header naming the process (host/pid) that published, so an operator
 * can trace a message, or a message published twice, to its replica.
 */
export const PUBLISHER_HEADER = 'publisher';
export const PUBLISHER = `${os.hostname()}/${process.pid}`;

/**
 * The header that carries the id of the request that caused an event (from the outbox row): the
 * consumer's log lines and its calls to other services carry it, so one request's lines join up.
 */
export const REQUEST_ID_HEADER = 'requestId';

export const RETRY_BACKOFF_MS = { initial: 200, max: 5000 };

export function nextBackoff(current: number): number {
  return Math.min(current * 2, RETRY_BACKOFF_MS.max);
}
