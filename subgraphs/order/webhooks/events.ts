/**
 * Which webhook event each topic is (CONTRACT §11), who subscribes to it, and the fan-out: each
 * event becomes one PENDING delivery per enabled endpoint whose subscriptions match it, in the
 * transaction that records the event as consumed. The unique (endpoint, event) pair makes a
 * redelivered event add nothing.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Subscription } from '../../../platform/events/bus';
import { consumeBatch, consumerGroupOf } from '../../../platform/events/consumer';
import { TOPICS, schemasOf, type EventEnvelope, type Topic } from '../../../platform/events/topics';
import type { ServiceShell } from '../../../rest-compat/service';
import { WebhookDelivery, WebhookEndpoint } from './entities';

export const WEBHOOK_EVENT_TYPES = [
  'order.created',
  'order.cancelled',
  'order.status_changed',
  'payment.succeeded',
  'payment.failed',
  'payment.refunded',
  'book.stock_low',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What an endpoint may subscribe to: an event type, `<prefix>.*` for a prefix of one, or `*`. */
export const SUBSCRIPTIONS: readonly string[] = [...WEBHOOK_EVENT_TYPES, ...new Set(WEBHOOK_EVENT_TYPES.map((type) => `${type.split('.')[0]}.*`)), '*'];

/** The ping `POST .../test` sends; no subscription is needed for it. */
export const TEST_EVENT_TYPE = 'webhook.test';

const TOPIC_TYPES: Partial<Record<Topic, WebhookEventType>> = {
  [TOPICS.orderCreated]: 'order.created',
  [TOPICS.orderCancelled]: 'order.cancelled',
  [TOPICS.orderStatusChanged]: 'order.status_changed',
  [TOPICS.paymentSuccess]: 'payment.succeeded',
  [TOPICS.paymentFailed]: 'payment.failed',
  [TOPICS.paymentRefunded]: 'payment.refunded',
  [TOPICS.bookStockLow]: 'book.stock_low',
};

export function subscribes(events: readonly string[], type: string): boolean {
  return events.some((event) => event === '*' || event === type || (event.endsWith('.*') && type.startsWith(event.slice(0, -1))));
}

/** The body a delivery sends: the event's id, its webhook type, when it happened, and its fields as `data`. */
export function deliveryBody(type: string, event: EventEnvelope): string {
  const { eventId, type: _topicType, occurredAt, ...data } = event as EventEnvelope & Record<string, unknown>;
  return JSON.stringify({ id: eventId, type, createdAt: occurredAt, data });
}

/** The first try of a retry series: 1 + 5 retries (CONTRACT §11). */
export const ATTEMPTS_PER_DELIVERY = 6;

export function newDelivery(endpointId: string, eventId: string, type: string, payload: string, now: Date): WebhookDelivery {
  return Object.assign(new WebhookDelivery(), {
    id: randomUUID(),
    endpointId,
    eventId,
    type,
    payload,
    status: 'PENDING' as const,
    attempts: 0,
    maxAttempts: ATTEMPTS_PER_DELIVERY,
    nextAttemptAt: now,
    claimedUntil: null,
    claimToken: null,
    lastStatusCode: null,
    lastError: null,
    responseExcerpt: null,
    createdAt: now,
    updatedAt: now,
  });
}

async function fanOut(manager: EntityManager, events: { topic: string; event: EventEnvelope }[]): Promise<void> {
  const endpoints = await manager.find(WebhookEndpoint, { where: { enabled: true } });
  if (endpoints.length === 0) return;
  const now = new Date();
  const rows: WebhookDelivery[] = [];
  for (const { topic, event } of events) {
    const type = TOPIC_TYPES[topic as Topic];
    if (!type) continue;
    const payload = deliveryBody(type, event);
    for (const endpoint of endpoints) if (subscribes(endpoint.events, type)) rows.push(newDelivery(endpoint.id, event.eventId.toLowerCase(), type, payload, now));
  }
  for (let i = 0; i < rows.length; i += 200) {
    await manager
      .createQueryBuilder()
      .insert()
      .into(WebhookDelivery)
      .values(rows.slice(i, i + 200))
      .orIgnore()
      .execute();
  }
}

/**
 * The fan-out's consumer: a group of its own (`order-service.webhooks`), so it reads payment-success
 * beside the consumer that makes orders from it, and records what it applied under that name.
 */
export function webhookConsumer(shell: Pick<ServiceShell, 'bus' | 'db' | 'logger' | 'eventMetrics'>): Promise<Subscription> {
  return consumeBatch({
    service: 'order',
    bus: shell.bus,
    db: shell.db,
    logger: shell.logger,
    metrics: shell.eventMetrics,
    groupId: `${consumerGroupOf('order')}.webhooks`,
    topics: schemasOf(Object.keys(TOPIC_TYPES) as Topic[]),
    maxBatchSize: 500,
    applyBatch: (events, manager) => fanOut(manager, events),
  });
}
