/**
 * Idempotent consumption: an event's effect and the record that it was applied commit in one
 * transaction, so redelivery changes nothing. A message that cannot be parsed or fails validation
 * goes to `<topic>.DLT` with the reason, and consumption goes on.
 */
import 'reflect-metadata';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validate } from 'class-validator';
import { Entity, PrimaryColumn, type EntityManager } from 'typeorm';
import { TimestampColumn, isUniqueViolation, type Database } from '../database';
import type { Logger } from '../logger';
import { runInContext } from '../request-context';
import { traceConsumption } from '../telemetry/spans';
import { REQUEST_ID_HEADER, type ConsumedMessage, type EventBus, type SubscribeOptions, type Subscription } from './bus';
import type { EventMetrics } from './metrics';
import { passesQuickly } from './quick-validation';
import { TOPIC_SCHEMAS, deadLetterTopic, type EventEnvelope, type Topic, type TopicPayloads } from './topics';

@Entity({ name: 'processed_events' })
export class ProcessedEvent {
  @PrimaryColumn({ type: 'varchar', length: 120 })
  consumer!: string;

  @PrimaryColumn({ name: 'event_id', type: 'varchar', length: 36 })
  eventId!: string;

  @TimestampColumn('processed_at')
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
  if (passesQuickly(event)) return event;
  const errors = await validate(event, { forbidUnknownValues: true });
  if (errors.length > 0) {
    const reasons = errors.flatMap((e) => Object.values(e.constraints ?? { [e.property]: 'is invalid' }));
    throw new PoisonMessageError(`payload failed validation: ${reasons.join('; ')}`);
  }
  return event;
}

/** Where a consumer's spans go (platform/telemetry/spans.ts): its service, its bus, its group. */
interface TracedConsumer {
  /** The service that consumes: its name on the consumer's spans (default the process's). */
  service?: string;
  bus: EventBus;
  groupId: string;
}

function consumption<T>(options: TracedConsumer, messages: ConsumedMessage[], work: () => Promise<T>): Promise<T> {
  return traceConsumption(options.service, { system: options.bus.kind === 'kafka' ? 'kafka' : 'in-process', group: options.groupId }, messages, work);
}

export interface ConsumerOptions<T extends EventEnvelope> {
  /** The service that consumes: its name on the consumer's spans (default the process's). */
  service?: string;
  bus: EventBus;
  db: Database;
  logger: Logger;
  /** Consumer group id; also the name under which applied events are recorded. */
  groupId: string;
  /** The service's event metrics: dead letters and the group's lag are counted there. */
  metrics?: EventMetrics;
  topic: string;
  schema: ClassConstructor<T>;
  /**
   * Runs before the transaction, for an event not applied yet: work outside the database that must
   * not hold a transaction open, such as a call to a payment provider. It must be idempotent by
   * itself (a crash before the commit runs it again); a rejection redelivers the event. A consumer
   * with a prepare step takes a batch one event at a time, exactly as a single message, so every
   * event of a batch has its effect outside the database before it is recorded as applied.
   */
  prepare?(event: T): Promise<void>;
  /** Applies the event inside the transaction that records it as applied (events it records are published once that commits). */
  apply(event: T, manager: EntityManager): Promise<void>;
  /** Most messages applied in one transaction; default 500. */
  maxBatchSize?: number;
}

/**
 * The consumer group of a service's consumers, and the name its applied events are recorded under
 * in `processed_events`: fixed, since changing it would apply every retained event again.
 */
export function consumerGroupOf(service: string): string {
  return `${service}-service`;
}

/** A consumer of one of our topics: the payload class, and so the event's type, follow from the topic. */
export type TopicConsumerOptions<K extends Topic> = Omit<ConsumerOptions<TopicPayloads[K]>, 'topic' | 'schema'> & { topic: K };

/** Records `eventId` as applied by `consumer`; false when it already was. */
export async function markProcessed(manager: EntityManager, consumer: string, eventId: string): Promise<boolean> {
  const seen = await manager.findOne(ProcessedEvent, { where: { consumer, eventId } });
  if (seen) return false;
  await manager.insert(ProcessedEvent, { consumer, eventId, processedAt: new Date() });
  return true;
}

/** Parses `message`; a poison message goes to `<topic>.DLT` with the reason and yields undefined. */
async function parseOrDeadLetter<T extends EventEnvelope>(
  options: { bus: EventBus; logger: Logger; groupId: string; metrics?: EventMetrics },
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
    options.metrics?.deadLettered.inc({ group: options.groupId, topic });
    return undefined;
  }
}

export async function handleMessage<T extends EventEnvelope>(options: ConsumerOptions<T>, message: ConsumedMessage): Promise<void> {
  const event = await parseOrDeadLetter(options, options.schema, { ...message, topic: options.topic });
  if (event) await consumption(options, [message], () => runInContext(eventContext(event, message), () => applyOnce(options, event)));
}

/**
 * What every line logged while an event is handled carries: the event's id and the id of the
 * request that caused it, which the calls the handler makes to other services forward too.
 */
function eventContext(event: EventEnvelope, message: ConsumedMessage): { eventId: string; requestId?: string } {
  const requestId = message.headers?.[REQUEST_ID_HEADER];
  return requestId ? { eventId: event.eventId, requestId } : { eventId: event.eventId };
}

async function applyOnce<T extends EventEnvelope>(options: ConsumerOptions<T>, event: T): Promise<void> {
  const { db, logger, topic, groupId } = options;
  const alreadyApplied = () => db.manager.findOne(ProcessedEvent, { where: { consumer: groupId, eventId: event.eventId } });
  try {
    if (options.prepare) {
      if (await alreadyApplied()) {
        logger.debug({ topic }, 'event already applied');
        return;
      }
      await options.prepare(event);
    }
    const applied = await db.transaction(async (manager) => {
      if (!(await markProcessed(manager, groupId, event.eventId))) return false;
      await options.apply(event, manager);
      return true;
    });
    if (!applied) logger.debug({ topic }, 'event already applied');
  } catch (error) {
    // Two deliveries of one event racing: the loser's insert hits the primary key.
    if (isUniqueViolation(error) && (await alreadyApplied())) return;
    logger.warn({ err: error, topic }, 'event could not be applied; it will be redelivered');
    throw error;
  }
}

/**
 * Applies a batch of one topic's messages (in partition order) in one transaction: the events not
 * yet recorded are recorded and applied in turn with the same manager, so each sees what the ones
 * before it wrote (a second event of one business key finds the first one's effect). When the
 * batch transaction fails (an event that cannot be applied now, a concurrent delivery of the same
 * event by a member that lost its partition in a rebalance), it is rolled back whole and the
 * messages go one by one through handleMessage, so only a failing event waits and redelivers. A
 * consumer with a prepare step always goes one by one (see ConsumerOptions.prepare).
 */
async function handleBatchOfOneTopic<T extends EventEnvelope>(options: ConsumerOptions<T>, messages: ConsumedMessage[]): Promise<void> {
  if (messages.length === 1 || options.prepare) {
    for (const message of messages) await handleMessage(options, message);
    return;
  }
  const { db, topic, groupId } = options;
  const parsed = await parseAll(options, messages, () => options.schema);
  if (parsed.length === 0) return;
  try {
    await consumption(options, messages, () =>
      db.transaction(async (manager) => {
        for (const { event, message } of await recordFresh(manager, groupId, parsed)) {
          await runInContext(eventContext(event, message), () => options.apply(event, manager));
        }
      }),
    );
  } catch (error) {
    options.logger.debug({ err: error, topic, size: parsed.length }, 'batch not applied whole; applying its events one by one');
    for (const { message } of parsed) await handleMessage(options, message);
  }
}

/** The messages parsed, in order, each with its event; poison messages go to their dead-letter topic and are left out. */
async function parseAll<T extends EventEnvelope>(
  options: { bus: EventBus; logger: Logger; groupId: string; metrics?: EventMetrics; topic?: string },
  messages: ConsumedMessage[],
  schemaOf: (topic: string) => ClassConstructor<T>,
): Promise<{ message: ConsumedMessage; event: T }[]> {
  const parsed: { message: ConsumedMessage; event: T }[] = [];
  for (const received of messages) {
    // A consumer of one topic reads it under that name, whatever namespace the bus added.
    const message = options.topic ? { ...received, topic: options.topic } : received;
    const event = await parseOrDeadLetter(options, schemaOf(message.topic), message);
    if (event) parsed.push({ message, event });
  }
  return parsed;
}

/** Ids per statement of recordFresh: a batch in one or a few round trips, within both databases' placeholder limits. */
const RECORD_CHUNK = 5000;

/**
 * Records as applied by `consumer` the events of `entries` that were not yet (the first of
 * duplicates within the list); resolves with their entries in order. The ids are inserted RECORD_CHUNK at a time in one
 * multi-row statement: redelivery is rare, so the insert is tried first, and only a chunk that hits
 * an id already recorded (the failed statement changed nothing) is read back to insert the others.
 * Plain SQL: the query builder's per-row work would cost more than the statements.
 */
async function recordFresh<P extends { event: EventEnvelope }>(manager: EntityManager, consumer: string, entries: P[]): Promise<P[]> {
  const ids = [...new Set(entries.map((entry) => entry.event.eventId))];
  const metadata = manager.connection.getMetadata(ProcessedEvent);
  const table = manager.connection.driver.escape(metadata.tableName);
  const processedAtColumn = metadata.findColumnWithPropertyName('processedAt');
  if (!processedAtColumn) throw new Error('processed_events has no processed_at column');
  const processedAt: unknown = manager.connection.driver.preparePersistentValue(new Date(), processedAtColumn);
  const insert = (part: string[]) =>
    manager.query(
      `INSERT INTO ${table} (consumer, event_id, processed_at) VALUES ${part.map(() => '(?, ?, ?)').join(', ')}`,
      part.flatMap((id) => [consumer, id, processedAt]),
    );
  const recorded = new Set<string>();
  for (let i = 0; i < ids.length; i += RECORD_CHUNK) {
    let part = ids.slice(i, i + RECORD_CHUNK);
    try {
      await insert(part);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const rows = await manager.query<{ event_id: string }[]>(`SELECT event_id FROM ${table} WHERE consumer = ? AND event_id IN (${part.map(() => '?').join(', ')})`, [
        consumer,
        ...part,
      ]);
      const seen = new Set(rows.map((row) => row.event_id));
      part = part.filter((id) => !seen.has(id));
      if (part.length > 0) await insert(part);
    }
    for (const id of part) recorded.add(id);
  }
  // Each recorded id once, for its first event in the list.
  return entries.filter((entry) => recorded.delete(entry.event.eventId));
}

/**
 * A subscription's figures in the service's metrics: its dead letters counted from zero (so the
 * first one is an increase), and the lag the bus reports, under the broker's name of the group.
 */
function measured(metrics: EventMetrics | undefined, options: { groupId: string; topics: string[]; brokerGroup: string }): SubscribeOptions['onLag'] {
  if (!metrics) return undefined;
  for (const topic of options.topics) metrics.deadLettered.inc({ group: options.groupId, topic }, 0);
  return (topic, behind) => metrics.consumerLag.set({ group: options.brokerGroup, topic }, behind);
}

/**
 * Subscribes one topic. Each topic gets its own broker consumer group (`<groupId>.<topic>`): members
 * of one Kafka group must subscribe the same topics, or partitions go to members that cannot read them.
 * Messages arrive in batches per partition, applied one transaction per batch (see handleBatchOfOneTopic).
 */
export function consume<K extends Topic>(options: TopicConsumerOptions<K>): Promise<Subscription>;
export function consume<T extends EventEnvelope>(options: ConsumerOptions<T>): Promise<Subscription>;
export function consume(options: ConsumerOptions<EventEnvelope> | TopicConsumerOptions<Topic>): Promise<Subscription> {
  if (!('schema' in options)) return consume({ ...options, schema: TOPIC_SCHEMAS[options.topic] });
  return options.bus.subscribe({
    groupId: `${options.groupId}.${options.topic}`,
    topics: [options.topic],
    onLag: measured(options.metrics, { groupId: options.groupId, topics: [options.topic], brokerGroup: `${options.groupId}.${options.topic}` }),
    maxBatchSize: options.maxBatchSize,
    handleBatch: (messages) => handleBatchOfOneTopic(options, messages),
  });
}

export interface BatchConsumerOptions {
  /** The service that consumes: its name on the consumer's spans (default the process's). */
  service?: string;
  bus: EventBus;
  db: Database;
  logger: Logger;
  /** Consumer group id (one group for all the topics) and the name applied events are recorded under. */
  groupId: string;
  /** The service's event metrics: dead letters and the group's lag are counted there. */
  metrics?: EventMetrics;
  /** Each consumed topic with its payload class. */
  topics: Record<string, ClassConstructor<EventEnvelope>>;
  /** Applies the new events of a batch, in order, inside the transaction that records them. */
  applyBatch(events: { topic: string; event: EventEnvelope }[], manager: EntityManager): Promise<void>;
  maxBatchSize?: number;
  partitionsConcurrently?: number;
  maxBytesPerPartition?: number;
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
    onLag: measured(options.metrics, { groupId, topics: Object.keys(options.topics), brokerGroup: groupId }),
    maxBatchSize: options.maxBatchSize,
    partitionsConcurrently: options.partitionsConcurrently,
    maxBytesPerPartition: options.maxBytesPerPartition,
    handleBatch: async (messages) => {
      const parsed = await parseAll(options, messages, (topic) => options.topics[topic]);
      if (parsed.length === 0) return;
      await consumption(options, messages, () =>
        db.transaction(async (manager) => {
          const fresh = await recordFresh(manager, groupId, parsed);
          if (fresh.length === 0) return;
          await options.applyBatch(
            fresh.map(({ message, event }) => ({ topic: message.topic, event })),
            manager,
          );
        }),
      );
    },
  });
}
