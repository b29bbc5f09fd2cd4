/**
 * What an operator watches of a service's events (the alerts in deploy/prometheus): how much its
 * outbox holds and for how long, how far each of its consumer groups is behind, and how many
 * messages its consumers sent to a dead-letter topic. Every service's shell registers them.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Database } from '../database';
import type { Logger } from '../logger';
import { OutboxEvent } from './outbox';

export class EventMetrics {
  readonly deadLettered = new Counter({
    name: 'bookstore_events_dead_lettered_total',
    help: 'Messages a consumer could not parse or validate, sent to <topic>.DLT',
    labelNames: ['group', 'topic'],
    registers: [],
  });

  /** Set by the Kafka bus each time a consumer reads its group's offsets (every 15 s); the in-process bus has no lag. */
  readonly consumerLag = new Gauge({
    name: 'bookstore_events_consumer_lag_messages',
    help: "Messages of a topic the consumer group has not committed yet, over all the topic's partitions",
    labelNames: ['group', 'topic'],
    registers: [],
  });

  private readonly outboxEvents: Gauge;
  private readonly outboxOldestAge: Gauge;

  constructor(db: Database, logger: Logger) {
    // Read at scrape time from the outbox table every replica of the service shares, so each
    // replica reports the same figures. A database that does not answer leaves no sample: the
    // service's health (and the ServiceDown alert) says so, not a stale zero.
    const outbox = async (): Promise<{ count: number; oldest: Date | undefined } | undefined> => {
      try {
        const [count, oldest] = await Promise.all([db.manager.count(OutboxEvent), db.manager.find(OutboxEvent, { order: { id: 'ASC' }, take: 1 })]);
        return { count, oldest: oldest[0]?.createdAt };
      } catch (error) {
        logger.debug({ err: error }, 'outbox figures not read for the metrics');
        return undefined;
      }
    };
    this.outboxEvents = new Gauge({
      name: 'bookstore_outbox_events',
      help: 'Events recorded in the outbox and not yet published to the bus',
      registers: [],
      async collect() {
        this.reset();
        const figures = await outbox();
        if (figures) this.set(figures.count);
      },
    });
    this.outboxOldestAge = new Gauge({
      name: 'bookstore_outbox_oldest_event_age_seconds',
      help: 'How long the oldest event in the outbox has waited to be published (0 when the outbox is empty)',
      registers: [],
      async collect() {
        this.reset();
        const figures = await outbox();
        if (figures) this.set(figures.oldest ? Math.max(0, (Date.now() - figures.oldest.getTime()) / 1000) : 0);
      },
    });
  }

  register(registry: Registry): void {
    for (const metric of [this.deadLettered, this.consumerLag, this.outboxEvents, this.outboxOldestAge]) registry.registerMetric(metric);
  }
}
