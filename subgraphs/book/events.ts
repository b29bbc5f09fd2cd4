/**
 * What the book service consumes (book/inventory.ts): `order-created` confirms the take its order
 * asked for first (or takes, for an order that did not), `order-cancelled` puts the copies back,
 * `payment-refund-succeeded` with `restock` puts back the refunded lines, and `payment-failed`
 * releases the payment's hold. It publishes `book-stock-low` when a sale or an admin's
 * change takes a tracked book's stock from above the threshold to at or below it.
 */
import type { EntityManager } from 'typeorm';
import type { Subscription } from '../../platform/events/bus';
import { enqueueEvent } from '../../platform/events/outbox';
import { TOPICS } from '../../platform/events/topics';
import type { ServiceEvents } from '../../rest-compat/service';
import type { Inventory } from './inventory';

export function bookConsumers(events: ServiceEvents, inventory: Inventory): Promise<Subscription>[] {
  return [
    events.consume({ topic: TOPICS.orderCreated, apply: (event, manager) => inventory.orderCreated(manager, event) }),
    events.consume({ topic: TOPICS.orderCancelled, apply: (event, manager) => inventory.orderCancelled(manager, event) }),
    events.consume({ topic: TOPICS.paymentRefundSucceeded, apply: (event, manager) => inventory.refundSucceeded(manager, event) }),
    events.consume({ topic: TOPICS.paymentFailed, apply: (event, manager) => inventory.paymentFailed(manager, event) }),
  ];
}

/** Publishes `book-stock-low` when the stock crosses the threshold downwards (once per crossing, not once per sale below it). */
export async function publishStockLowIfCrossed(
  manager: EntityManager,
  book: { id: string; title: string },
  before: number | null,
  after: number | null,
  threshold: number,
): Promise<void> {
  if (after === null || after > threshold || (before !== null && before <= threshold)) return;
  await enqueueEvent(manager, TOPICS.bookStockLow, book.id, { bookId: book.id, title: book.title, stock: after, threshold });
}
