/**
 * Stock follows orders (CONTRACT §4, §7). `order-created` takes each tracked book's quantity off
 * its stock and `order-cancelled` puts back what that order took, each once per order: the
 * consumer records the eventId, and `order_stock` records per order and book what was taken and
 * whether it was returned, so a second event for the same order (a new eventId) changes nothing.
 *
 * Checkout refuses a tracked book beyond its stock, but two checkouts for the last copy can both
 * pass that check before either order exists. The decision: the decrement here is the authority.
 * It is one conditional UPDATE (`stock >= quantity`) under the row's lock, so stock never goes
 * below zero and at most the copies in stock are taken; an order that asked for more than was
 * left takes what remained, and the shortfall is logged and counted in
 * `bookstore_stock_oversold_copies_total` for someone to settle with the customer.
 *
 * A sale that takes a book's stock from above `BOOK_STOCK_LOW_THRESHOLD` to at or below it
 * publishes `book-stock-low` in the same transaction.
 *
 * A refund of lines with `restock` (`payment-refund-succeeded`, an admin's partial refund) puts
 * those copies back, once per event through the same consumer record. The copies come off what
 * the order took (`order_stock.taken`), so a later cancel of the order puts back only the rest;
 * a refund never puts back more than the order took off (an oversold order took fewer copies than
 * it lists), nor anything once the order's cancel returned its copies. A refund whose order the book
 * service has not seen yet (its `order-created` comes later, or no order exists) puts back the
 * quantities refunded; that order's `order-created` then takes its full quantities, which nets the
 * same stock. A book deleted since, or one whose stock is not tracked, is skipped.
 */
import { Counter, type Registry } from 'prom-client';
import type { EntityManager } from 'typeorm';
import { forUpdate, type Database } from '../../platform/database';
import type { EventItem, OrderCancelledEvent, OrderCreatedEvent, PaymentRefundSucceededEvent } from '../../platform/events/topics';
import type { Logger } from '../../platform/logger';
import { Book, OrderStock } from './entities';
import { publishStockLowIfCrossed } from './events';

/** Quantities per book, an order listing a book twice counted once. */
function quantities(items: readonly EventItem[]): Map<string, number> {
  const byBook = new Map<string, number>();
  for (const item of items) byBook.set(item.bookId.toLowerCase(), (byBook.get(item.bookId.toLowerCase()) ?? 0) + item.quantity);
  return byBook;
}

export class Inventory {
  private readonly oversold = new Counter({
    name: 'bookstore_stock_oversold_copies_total',
    help: 'Copies ordered beyond the stock left (a race between checkouts); stock stayed at zero',
    registers: [],
  });

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly stockLowThreshold: number,
  ) {}

  registerMetrics(registry: Registry): void {
    registry.registerMetric(this.oversold);
  }

  async orderCreated(manager: EntityManager, event: OrderCreatedEvent): Promise<void> {
    const orderId = event.orderId.toLowerCase();
    if ((await manager.count(OrderStock, { where: { orderId } })) > 0) return;
    for (const [bookId, quantity] of quantities(event.items)) {
      const taken = await this.take(manager, bookId, quantity);
      if (taken === undefined) continue;
      if (taken < quantity) {
        this.oversold.inc(quantity - taken);
        this.logger.warn({ orderId, bookId, ordered: quantity, taken }, 'order oversold a book: stock stays at zero');
      }
      await manager.insert(OrderStock, { orderId, bookId, taken, returned: false });
    }
  }

  /** Takes up to `quantity` copies; answers how many, or undefined for an unknown or untracked book. */
  private async take(manager: EntityManager, bookId: string, quantity: number): Promise<number | undefined> {
    const book = await manager.findOne(Book, { where: { id: bookId }, ...forUpdate(this.db) });
    if (!book || book.stock === null) return undefined;
    const taken = Math.min(quantity, book.stock);
    if (taken === 0) return 0;
    const result = await manager
      .createQueryBuilder()
      .update(Book)
      .set({ stock: () => `stock - ${taken}`, updatedAt: new Date() })
      .where('id = :bookId AND stock >= :taken', { bookId, taken })
      .execute();
    if (!result.affected) return 0;
    await publishStockLowIfCrossed(manager, book, book.stock, book.stock - taken, this.stockLowThreshold);
    return taken;
  }

  async orderCancelled(manager: EntityManager, event: OrderCancelledEvent): Promise<void> {
    const orderId = event.orderId.toLowerCase();
    if ((await manager.count(OrderStock, { where: { orderId } })) === 0) {
      // Cancelled before its creation was consumed (two topics, no order between them): nothing
      // was taken, and the late order-created must take nothing either.
      for (const bookId of quantities(event.items).keys()) await manager.insert(OrderStock, { orderId, bookId, taken: 0, returned: true });
      return;
    }
    const lines = await manager.find(OrderStock, { where: { orderId, returned: false } });
    for (const line of lines) {
      if (line.taken > 0) {
        await manager
          .createQueryBuilder()
          .update(Book)
          .set({ stock: () => `stock + ${line.taken}`, updatedAt: new Date() })
          .where('id = :bookId AND stock IS NOT NULL', { bookId: line.bookId })
          .execute();
      }
      await manager.update(OrderStock, { orderId, bookId: line.bookId }, { returned: true });
    }
  }

  async refundSucceeded(manager: EntityManager, event: PaymentRefundSucceededEvent): Promise<void> {
    if (!event.restock) return;
    const orderId = event.orderId.toLowerCase();
    for (const [bookId, quantity] of quantities(event.items)) {
      const book = await manager.findOne(Book, { where: { id: bookId }, ...forUpdate(this.db) });
      if (!book) {
        this.logger.warn({ refundId: event.refundId, orderId, bookId, quantity }, 'refunded copies of a deleted book not put back in stock');
        continue;
      }
      if (book.stock === null) continue;
      const copies = orderId ? await this.untake(manager, orderId, bookId, quantity) : quantity;
      if (copies === 0) continue;
      await manager
        .createQueryBuilder()
        .update(Book)
        .set({ stock: () => `stock + ${copies}`, updatedAt: new Date() })
        .where('id = :bookId AND stock IS NOT NULL', { bookId })
        .execute();
    }
  }

  /** How many of `quantity` refunded copies go back for the order, taken off what its line took. */
  private async untake(manager: EntityManager, orderId: string, bookId: string, quantity: number): Promise<number> {
    const line = await manager.findOne(OrderStock, { where: { orderId, bookId } });
    if (!line) return quantity;
    const copies = line.returned ? 0 : Math.min(quantity, line.taken);
    if (copies > 0) await manager.update(OrderStock, { orderId, bookId }, { taken: line.taken - copies });
    return copies;
  }
}
