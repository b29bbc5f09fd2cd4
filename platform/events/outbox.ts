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
    const { db, bus, logger } = this.options;
    const batchSize = this.options.batchSize ?? 500;
    try {
      for (;;) {
        const rows = await db.manager.find(OutboxEvent, { order: { id: 'ASC' }, take: batchSize });
        if (rows.length === 0) break;
        await bus.publish(rows.map((row) => ({ topic: row.topic, key: row.messageKey, value: row.payload, headers: { eventId: row.eventId } })));
        await db.transaction((manager) => manager.delete(OutboxEvent, rows.map((row) => row.id)));
        this.backoff = RETRY_BACKOFF_MS.initial;
        if (this.stopped || rows.length < batchSize) break;
      }
      this.schedule(this.options.pollMs ?? 1000);
    } catch (error) {
      logger.warn({ err: error, retryInMs: this.backoff }, 'outbox relay could not publish; retrying');
      this.schedule(this.backoff);
      this.backoff = nextBackoff(this.backoff);
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, ms);
    this.timer.unref();
  }

  /** Finishes the pass under way (so acknowledged rows are removed), then stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Resolves when nothing is left to publish (used by graceful shutdown and tests). */
  async pending(): Promise<number> {
    return this.options.db.manager.count(OutboxEvent);
  }
}
