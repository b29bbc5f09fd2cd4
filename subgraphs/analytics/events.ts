/**
 * What analytics consumes: every payment event (CONTRACT §8, §11), in batches, one consumer group
 * for all six topics. The legacy `payment-completed` counts as paid, so it closes the interface's
 * known gap without counting a payment twice when `payment-success` also arrives.
 */
import type { DatabaseKind } from '../../platform/database';
import type { Subscription } from '../../platform/events/bus';
import {
  CHECKOUT_EXPIRED,
  TOPICS,
  schemasOf,
  type EventEnvelope,
  type PaymentCompletedEvent,
  type PaymentCreatedEvent,
  type PaymentFailedEvent,
  type PaymentRefundFailedEvent,
  type PaymentRefundSucceededEvent,
  type PaymentRefundedEvent,
  type PaymentSuccessEvent,
} from '../../platform/events/topics';
import type { ServiceEvents } from '../../rest-compat/service';
import { utcDay, type FactEvent } from './facts';
import { ingest } from './ingest';

/** A refund's key among a payment's refunds: a refund asked again after the provider failed it succeeds anew. */
const refundKey = (refundId: string, attempt = 0) => `${refundId.toLowerCase()}${attempt > 0 ? `:${attempt}` : ''}`;

/** The fact an event tells, or undefined for one that tells none: a checkout left unpaid until its hold ran out is not a failed payment (CONTRACT §8). */
export function toFactEvent(topic: string, event: EventEnvelope): FactEvent | undefined {
  const day = utcDay(event.occurredAt);
  switch (topic) {
    case TOPICS.paymentCreated: {
      const e = event as PaymentCreatedEvent;
      return { kind: 'created', paymentId: e.paymentId.toLowerCase(), day, amount: e.amount, items: e.items };
    }
    case TOPICS.paymentSuccess: {
      const e = event as PaymentSuccessEvent;
      return { kind: 'paid', paymentId: e.paymentId.toLowerCase(), day, amount: e.amount, items: e.items };
    }
    case TOPICS.paymentCompleted: {
      const e = event as PaymentCompletedEvent;
      return { kind: 'paid', paymentId: e.paymentId.toLowerCase(), day, amount: e.amount };
    }
    case TOPICS.paymentFailed: {
      const e = event as PaymentFailedEvent;
      if (e.reason === CHECKOUT_EXPIRED) return undefined;
      return { kind: 'failed', paymentId: e.paymentId.toLowerCase(), day, amount: e.amount };
    }
    case TOPICS.paymentRefunded: {
      const e = event as PaymentRefundedEvent;
      return { kind: 'refunded', paymentId: e.paymentId.toLowerCase(), day, amount: e.amount };
    }
    case TOPICS.paymentRefundSucceeded: {
      const e = event as PaymentRefundSucceededEvent;
      return {
        kind: 'refund',
        paymentId: e.paymentId.toLowerCase(),
        day,
        refundId: refundKey(e.refundId, e.attempt),
        amount: e.amount,
        paymentAmount: e.paymentAmount,
        items: e.items,
      };
    }
    case TOPICS.paymentRefundFailed: {
      const e = event as PaymentRefundFailedEvent;
      // Only a reversal (a refund that had succeeded) changes a figure; a refusal never counted.
      if (e.refundId === undefined || e.reversedAmount === undefined) return undefined;
      const refundId = refundKey(e.refundId, e.attempt);
      return { kind: 'reversal', paymentId: e.paymentId.toLowerCase(), day, refundId, amount: e.reversedAmount, paymentAmount: e.paymentAmount ?? 0, full: e.full ?? false };
    }
    default:
      throw new Error(`analytics does not consume ${topic}`);
  }
}

export function analyticsConsumer(events: ServiceEvents, kind: DatabaseKind): Promise<Subscription> {
  return events.consumeBatch({
    topics: schemasOf([
      TOPICS.paymentCreated,
      TOPICS.paymentSuccess,
      TOPICS.paymentCompleted,
      TOPICS.paymentFailed,
      TOPICS.paymentRefunded,
      TOPICS.paymentRefundSucceeded,
      TOPICS.paymentRefundFailed,
    ]),
    // A few batches at once, so that one is parsed while another waits on the database. They lock
    // facts, then days, then books, each in key order, so they wait for each other rather than
    // deadlock (InnoDB's rare gap-lock deadlock is retried by Database.transaction); per-key order
    // holds within a partition, and a fact does not depend on the order of its events.
    partitionsConcurrently: 3,
    // What one fetch brings from a partition (up to 4 MiB, some 8,000 payment events) is one
    // transaction: the round trips and the aggregate rows written are per batch, so bigger batches
    // cost less per event.
    maxBytesPerPartition: 4 << 20,
    maxBatchSize: 10_000,
    applyBatch: (batch, manager) =>
      ingest(
        manager,
        kind,
        batch.flatMap(({ topic, event }) => toFactEvent(topic, event) ?? []),
      ),
  });
}
