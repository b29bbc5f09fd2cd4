/**
 * The event bus every service gets: Kafka in the full setup, an in-process bus in the embedded one.
 * Delivery is at least once; consumers make it effectively once (see consumer.ts).
 */

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
  handle?(message: ConsumedMessage): Promise<void>;
  /**
   * Instead of `handle`: several messages at once (in order per partition), committed or redelivered
   * together. For consumers whose work per message is small next to a transaction's cost.
   */
  handleBatch?(messages: ConsumedMessage[]): Promise<void>;
  /** Most messages per `handleBatch` call; default 500. */
  maxBatchSize?: number;
  /**
   * How many partitions one consumer works on at once (Kafka; default all). 1 for a consumer whose
   * batches lock the same rows, so that one instance never deadlocks with itself.
   */
  partitionsConcurrently?: number;
}

/** Hands messages to whichever handler the subscription has. */
export async function deliver(options: SubscribeOptions, messages: ConsumedMessage[]): Promise<void> {
  if (options.handleBatch) {
    await options.handleBatch(messages);
    return;
  }
  if (!options.handle) throw new Error(`Subscription of group ${options.groupId} has no handler`);
  for (const message of messages) await options.handle(message);
}

export interface Subscription {
  stop(): Promise<void>;
}

export interface EventBus {
  readonly kind: 'kafka' | 'memory';
  /** Resolves once the broker has acknowledged every message. */
  publish(messages: BusMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  health(): Promise<void>;
  close(): Promise<void>;
}

export const RETRY_BACKOFF_MS = { initial: 200, max: 5000 };

export function nextBackoff(current: number): number {
  return Math.min(current * 2, RETRY_BACKOFF_MS.max);
}
