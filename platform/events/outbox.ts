/**
 * Transactional outbox, the recording side: a service records its event in the same transaction as
 * the state change (`enqueueEvent`), and the relay of its database (outbox-relay.ts) is woken once
 * that transaction commits. A crash at any point leaves the row in place, so an event is published
 * at least once and never lost.
 */
import { randomUUID } from 'node:crypto';
import {
  Column,
  Entity,
  PrimaryGeneratedColumn,
  type DataSource,
  type EntityManager,
  type EntitySubscriberInterface,
  type QueryRunner,
  type TransactionCommitEvent,
  type TransactionRollbackEvent,
} from 'typeorm';
import { TimestampColumn } from '../database';
import { currentContext } from '../request-context';
import { withTraceHeaders } from '../telemetry/spans';
import { REQUEST_ID_HEADER } from './bus';
import { eventTypeOf, type EventEnvelope, type EventFields, type Topic, type TopicPayloads } from './topics';

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

  /**
   * The message headers beside `eventId`, as JSON: the id of the request that caused the event and,
   * with tracing on, its trace context (`traceparent`), so the trace goes on when the relay
   * publishes the event, later and from another loop.
   */
  @Column({ type: 'text', nullable: true })
  headers!: string | null;

  @TimestampColumn('created_at')
  createdAt!: Date;
}

/** Builds an event's common fields. */
export function eventEnvelope<T extends string>(type: T, occurredAt: Date = new Date()): EventEnvelope & { type: T } {
  return { eventId: randomUUID(), type, occurredAt: occurredAt.toISOString() };
}

/**
 * Records an event of `topic` for publication, its envelope (id, type, time) filled in. Call it inside the transaction that makes the change the event reports: the relay of the
 * service wakes once that transaction commits. Messages with the same `key` keep their order.
 */
export async function enqueueEvent<T extends Topic>(manager: EntityManager, topic: T, key: string, fields: EventFields<T>, occurredAt: Date = new Date()): Promise<void> {
  const event = { ...eventEnvelope(eventTypeOf(topic), occurredAt), ...fields } as TopicPayloads[T];
  await enqueueMessage(manager, topic, key, event);
}

/** Records any event under any topic (the typed `enqueueEvent` is this plus the envelope); for tests and benchmarks of the outbox itself. */
export async function enqueueMessage(manager: EntityManager, topic: string, key: string, event: EventEnvelope): Promise<void> {
  const runner = manager.queryRunner;
  if (!runner?.isTransactionActive) throw new Error(`An event of ${topic} must be recorded inside the transaction that makes its change`);
  const requestId = currentContext()?.requestId;
  const headers = withTraceHeaders<Record<string, string>>(requestId ? { [REQUEST_ID_HEADER]: requestId } : {});
  await manager.insert(OutboxEvent, {
    eventId: event.eventId,
    topic,
    messageKey: key,
    payload: JSON.stringify(event),
    headers: Object.keys(headers).length > 0 ? JSON.stringify(headers) : null,
    createdAt: new Date(),
  });
  withEvents.add(runner);
}

/** Transactions (by their query runner) that recorded events and have not ended yet. */
const withEvents = new WeakSet<QueryRunner>();

/**
 * Wakes the relays of a database when one of its transactions that recorded events commits, so no
 * service has to remember to; a rollback forgets them. One per DataSource, registered by the first
 * relay that starts on it.
 */
class OutboxWaker implements EntitySubscriberInterface {
  readonly relays = new Set<() => void>();

  afterTransactionCommit(event: TransactionCommitEvent): void {
    // A savepoint released inside a transaction commits nothing yet.
    if (event.queryRunner.isTransactionActive || !withEvents.delete(event.queryRunner)) return;
    for (const wake of this.relays) wake();
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) withEvents.delete(event.queryRunner);
  }
}

const wakers = new WeakMap<DataSource, OutboxWaker>();

export function wakerOf(dataSource: DataSource): OutboxWaker {
  let waker = wakers.get(dataSource);
  if (!waker) {
    waker = new OutboxWaker();
    wakers.set(dataSource, waker);
    dataSource.subscribers.push(waker);
  }
  return waker;
}
