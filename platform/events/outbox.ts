/**
 * Transactional outbox: a service records its event in the same transaction as the state change,
 * and the relay publishes what is recorded, in order, until the bus acknowledges it. A crash at
 * any point leaves the row in place, so an event is published at least once and never lost.
 */
import { randomUUID } from 'node:crypto';
import { Column, Entity, PrimaryGeneratedColumn, type EntityManager } from 'typeorm';
import type { Database } from '../database';
import type { Logger } from '../logger';
import type { EventBus } from './bus';
import { RETRY_BACKOFF_MS, nextBackoff } from './bus';
import type { EventEnvelope } from './topics';

@Entity({ name: 'outbox_events' })
export class OutboxEvent {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'event_id', type: 'varchar', length: 36 })
  eventId!: string;

  @Column({ type: 'varchar', length: 120 })
  topic!: string;

  @Column({ name: 'message_key', type: 'varchar', length: 120 })
  messageKey!: string;

  @Column({ type: 'text' })
  payload!: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}

/** Builds an event's common fields. */
export function eventEnvelope<T extends string>(type: T, occurredAt: Date = new Date()): EventEnvelope & { type: T } {
  return { eventId: randomUUID(), type, occurredAt: occurredAt.toISOString() };
}

/** Records `event` for publication; call inside the transaction that makes the change it reports. */
export async function enqueueEvent(manager: EntityManager, topic: string, key: string, event: EventEnvelope): Promise<void> {
  await manager.insert(OutboxEvent, {
    eventId: event.eventId,
    topic,
    messageKey: key,
    payload: JSON.stringify(event),
    createdAt: new Date(),
  });
}

export interface RelayOptions {
  db: Database;
  bus: EventBus;
  logger: Logger;
  batchSize?: number;
  /** Fallback poll for rows written by another process or left by a crash. */
  pollMs?: number;
}

export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private wakeAgain = false;
  private stopped = true;
  private backoff = RETRY_BACKOFF_MS.initial;

  constructor(private readonly options: RelayOptions) {}

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Asks for a pass now, e.g. right after a transaction that enqueued events committed. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeAgain = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      if (this.wakeAgain) {
        this.wakeAgain = false;
        this.wake();
      }
    });
  }

  /** Publishes everything pending; resolves once the outbox is empty or the bus refused. */
  private async pass(): Promise<void> {
    try {
      let count: number;
      do count = await this.publishBatch();
      while (count === this.batchSize && !this.stopped);
      this.backoff = RETRY_BACKOFF_MS.initial;
      this.schedule(this.options.pollMs ?? 1000);
    } catch (error) {
      this.options.logger.warn({ err: error, retryInMs: this.backoff }, 'outbox relay could not publish; retrying');
      this.schedule(this.backoff);
      this.backoff = nextBackoff(this.backoff);
    }
  }

  private get batchSize(): number {
    return this.options.batchSize ?? 500;
  }

  /** Publishes the oldest rows and removes them once the bus acknowledged them; resolves with their number. */
  private async publishBatch(): Promise<number> {
    const { db, bus } = this.options;
    const rows = await db.manager.find(OutboxEvent, { order: { id: 'ASC' }, take: this.batchSize });
    if (rows.length === 0) return 0;
    await bus.publish(rows.map((row) => ({ topic: row.topic, key: row.messageKey, value: row.payload, headers: { eventId: row.eventId } })));
    await db.transaction((manager) => manager.delete(OutboxEvent, rows.map((row) => row.id)));
    return rows.length;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, ms);
    this.timer.unref();
  }

  /**
   * Finishes the pass under way (so acknowledged rows are removed), then stops. With `flushMs`
   * (graceful shutdown), it first publishes what is still recorded, e.g. by a request that finished
   * while the server drained, for at most that long; what is left waits for the next start.
   */
  async stop(options: { flushMs?: number } = {}): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    if (options.flushMs) await this.flush(options.flushMs);
  }

  private async flush(ms: number): Promise<void> {
    const { logger } = this.options;
    const deadline = Date.now() + ms;
    let published = 0;
    const work = (async () => {
      for (;;) {
        const count = await this.publishBatch();
        published += count;
        if (count < this.batchSize || Date.now() >= deadline) return;
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
    try {
      const outcome = await Promise.race([work, timeout]);
      if (outcome === 'timeout') logger.warn({ published, flushMs: ms }, 'outbox not flushed in time; the rest is published at the next start');
      else if (published > 0) logger.info({ published }, 'outbox flushed');
    } catch (error) {
      logger.warn({ err: error, published }, 'outbox could not be flushed; the rest is published at the next start');
    } finally {
      clearTimeout(timer);
      // A publish still under way after the deadline may fail once the database is closed: the rows stay.
      work.catch(() => undefined);
    }
  }

  /** Resolves when nothing is left to publish (used by graceful shutdown and tests). */
  async pending(): Promise<number> {
    return this.options.db.manager.count(OutboxEvent);
  }
}
