/**
 * Idempotent consumption: an event's effect and the record that it was applied commit in one
 * transaction, so redelivery changes nothing. A message that cannot be parsed or fails validation
 * goes to `<topic>.DLT` with the reason, and consumption goes on.
 */
import 'reflect-metadata';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validate } from 'class-validator';
import { Column, Entity, In, PrimaryColumn, type EntityManager } from 'typeorm';
import { isUniqueViolation, type Database } from '../database';
import type { Logger } from '../logger';
import type { ConsumedMessage, EventBus, Subscription } from './bus';
import { deadLetterTopic, type EventEnvelope } from './topics';

@Entity({ name: 'processed_events' })
export class ProcessedEvent {
  @PrimaryColumn({ type: 'varchar', length: 120 })
  consumer!: string;

  @PrimaryColumn({ name: 'event_id', type: 'varchar', length: 36 })
  eventId!: string;

  @Column({ name: 'processed_at', type: 'datetime', precision: 3 })
  processedAt!: Date;
}

export class PoisonMessageError extends Error {}

/** Parses and validates a message against its payload class; throws PoisonMessageError otherwise. */
export async function parseEvent<T extends EventEnvelope>(schema: ClassConstructor<T>, value: string): Promise<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    throw new PoisonMessageError('payload is not valid JSON');
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new PoisonMessageError('payload is not a JSON object');
  const event = plainToInstance(schema, raw);
  const errors = await validate(event, { forbidUnknownValues: true });
  if (errors.length > 0) {
    const reasons = errors.flatMap((e) => Object.values(e.constraints ?? { [e.property]: 'is invalid' }));
    throw new PoisonMessageError(`payload failed validation: ${reasons.join('; ')}`);
  }
  return event;
}

export interface ConsumerOptions<T extends EventEnvelope> {
  bus: EventBus;
  db: Database;
  logger: Logger;
  /** Consumer group id; also the name under which applied events are recorded. */
  groupId: string;
  topic: string;
  schema: ClassConstructor<T>;
  /** Applies the event inside the transaction that records it as applied. */
  apply(event: T, manager: EntityManager): Promise<void>;
  /** Runs after the transaction commits (e.g. wake an outbox relay). */
  afterCommit?(): void;
}

/** Records `eventId` as applied by `consumer`; false when it already was. */
export async function markProcessed(manager: EntityManager, consumer: string, eventId: string): Promise<boolean> {
  const seen = await manager.findOne(ProcessedEvent, { where: { consumer, eventId } });
  if (seen) return false;
  await manager.insert(ProcessedEvent, { consumer, eventId, processedAt: new Date() });
  return true;
}

/** Parses `message`; a poison message goes to `<topic>.DLT` with the reason and yields undefined. */
async function parseOrDeadLetter<T extends EventEnvelope>(
  options: { bus: EventBus; logger: Logger; groupId: string },
  schema: ClassConstructor<T>,
  message: ConsumedMessage,
): Promise<T | undefined> {
  try {
    return await parseEvent(schema, message.value);
  } catch (error) {
    if (!(error instanceof PoisonMessageError)) throw error;
    const { topic } = message;
    options.logger.warn({ topic, offset: message.offset, reason: error.message }, 'poison message sent to the dead-letter topic');
    await options.bus.publish([
      {
        topic: deadLetterTopic(topic),
        key: message.key,
        value: message.value,
        headers: { 'dlt-reason': error.message, 'dlt-original-topic': topic, 'dlt-consumer': options.groupId, 'dlt-original-offset': message.offset },
      },
    ]);
    return undefined;
  }
}

export async function handleMessage<T extends EventEnvelope>(options: ConsumerOptions<T>, message: ConsumedMessage): Promise<void> {
  const { db, logger, topic, groupId } = options;
  const event = await parseOrDeadLetter(options, options.schema, { ...message, topic });
  if (!event) return;
  try {
    const applied = await db.transaction(async (manager) => {
      if (!(await markProcessed(manager, groupId, event.eventId))) return false;
      await options.apply(event, manager);
      return true;
    });
    if (applied) options.afterCommit?.();
    else logger.debug({ topic, eventId: event.eventId }, 'event already applied');
  } catch (error) {
    // Two deliveries of one event racing: the loser's insert hits the primary key.
    if (isUniqueViolation(error) && (await db.manager.findOne(ProcessedEvent, { where: { consumer: groupId, eventId: event.eventId } }))) return;
    logger.warn({ err: error, topic, eventId: event.eventId }, 'event could not be applied; it will be redelivered');
    throw error;
  }
}

/**
 * Subscribes one topic. Each topic gets its own broker consumer group (`<groupId>.<topic>`): members
 * of one Kafka group must subscribe the same topics, or partitions go to members that cannot read them.
 */
export function consume<T extends EventEnvelope>(options: ConsumerOptions<T>): Promise<Subscription> {
  return options.bus.subscribe({
    groupId: `${options.groupId}.${options.topic}`,
    topics: [options.topic],
    handle: (message) => handleMessage(options, message),
  });
}

export interface BatchConsumerOptions {
  bus: EventBus;
  db: Database;
  logger: Logger;
  /** Consumer group id (one group for all the topics) and the name applied events are recorded under. */
  groupId: string;
  /** Each consumed topic with its payload class. */
  topics: Record<string, ClassConstructor<EventEnvelope>>;
  /** Applies the new events of a batch, in order, inside the transaction that records them. */
  applyBatch(events: { topic: string; event: EventEnvelope }[], manager: EntityManager): Promise<void>;
  maxBatchSize?: number;
  partitionsConcurrently?: number;
}

/**
 * Batch consumption: a batch's new events are recorded and applied in one transaction, so a
 * consumer with cheap per-event work keeps up with bursts. Redelivered events are skipped by eventId.
 */
export function consumeBatch(options: BatchConsumerOptions): Promise<Subscription> {
  const { db, groupId } = options;
  return options.bus.subscribe({
    groupId,
    topics: Object.keys(options.topics),
    maxBatchSize: options.maxBatchSize,
    partitionsConcurrently: options.partitionsConcurrently,
    handleBatch: async (messages) => {
      const parsed: { topic: string; event: EventEnvelope }[] = [];
      for (const message of messages) {
        const event = await parseOrDeadLetter(options, options.topics[message.topic], message);
        if (event) parsed.push({ topic: message.topic, event });
      }
      if (parsed.length === 0) return;
      await db.transaction(async (manager) => {
        const ids = [...new Set(parsed.map((p) => p.event.eventId))];
        const seen = new Set<string>();
        for (let i = 0; i < ids.length; i += 500) {
          const rows = await manager.find(ProcessedEvent, { where: { consumer: groupId, eventId: In(ids.slice(i, i + 500)) } });
          for (const row of rows) seen.add(row.eventId);
        }
        const fresh = parsed.filter((p) => !seen.has(p.event.eventId) && (seen.add(p.event.eventId), true));
        if (fresh.length === 0) return;
        const processedAt = new Date();
        for (let i = 0; i < fresh.length; i += 500) {
          await manager.insert(ProcessedEvent, fresh.slice(i, i + 500).map((p) => ({ consumer: groupId, eventId: p.event.eventId, processedAt })));
        }
        await options.applyBatch(fresh, manager);
      });
    },
  });
}
