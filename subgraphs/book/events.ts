/** What the book service consumes: `order-created` takes the copies off the stock, `order-cancelled` puts them back (book/inventory.ts). It publishes `book-stock-low` when a sale takes a book's stock down to the threshold. */
import type { Subscription } from '../../platform/events/bus';
import { TOPICS } from '../../platform/events/topics';
import type { ServiceEvents } from '../../rest-compat/service';
import type { Inventory } from './inventory';

export function bookConsumers(events: ServiceEvents, inventory: Inventory): Promise<Subscription>[] {
  return [
    events.consume({ topic: TOPICS.orderCreated, apply: (event, manager) => inventory.orderCreated(manager, event) }),
    events.consume({ topic: TOPICS.orderCancelled, apply: (event, manager) => inventory.orderCancelled(manager, event) }),
  ];
}
