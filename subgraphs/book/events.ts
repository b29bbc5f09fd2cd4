/**
 * What the book service consumes: `order-created` takes the copies off the stock, `order-cancelled`
 * puts them back, and `payment-refund-succeeded` with `restock` puts back the refunded lines
 * (book/inventory.ts). It publishes `book-stock-low` when a sale or an admin's
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
