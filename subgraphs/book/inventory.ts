/**
 * Stock (CONTRACT §4, §7): a checkout holds the copies of its tracked books; the paid order takes
 * them; a cancel puts them back; a refund with restock puts its lines back. Every copy moves once.
 *
 * Holds. `hold` (the payment service, while it prices a checkout) places, atomically across the
 * lines and across replicas, one `stock_holds` line per tracked book of the cart: the book rows are
 * locked in id order, then the copies other live holds have are summed, so no two holds together
 * exceed a book's stock. Available = stock − held. A hold stays until it is released: its order
 * takes it (`commit`), its payment fails or is cancelled (`payment-failed`), or it expired and the
 * payment service has had the PaymentIntent cancelled at the provider (`payment-failed` with
 * `checkout_expired`), so copies never go back while the money can still come. A hold whose release
 * never comes stops counting one hold's length after its expiry. A customer holds at most
 * `maxPerBook` copies of a book and `maxCopies` in all; a new checkout of theirs for a book they
 * hold replaces their earlier unpaid checkout's hold, whole (the payment service cancels it).
 *
 * The take. `commit` (the order service, before it confirms a paid order) takes every line's copies
 * or none: a line is covered by its hold, or by what is free when the hold is gone; when one line is
 * short, nothing is taken, the lines are SHORT and the order service cancels and refunds the order.
 * It answers the same for the same payment however often it is asked.
 *
 * Every read of a stock line here is a locking read taken after the book rows are locked, so on
 * MariaDB's REPEATABLE READ a cancel and a refund of one order see each other's writes (a consumer's
 * transaction has read before, and a plain read would answer from that older snapshot). The one
 * exception is the sum of the other holds' copies in `hold` and `commit`: they run at READ
 * COMMITTED, where a plain read sees every hold committed before it, and every transaction that
 * adds held or taken copies of a book locks the book first, so none can change under the sum. A
 * locking read of that sum would lock each line it scanned, and the engine may scan the whole table
 * rather than the book's index range: two checkouts of different books then waited on each other's
 * lines and one died as a deadlock victim (41 in one run of the replica suite).
 *
 * Orders taken before holds existed are in `order_stock` by order id; their cancels and refunds
 * are settled from there.
 */
import { Counter, type Registry } from 'prom-client';
import { In, type EntityManager } from 'typeorm';
import { forUpdate, type Database } from '../../platform/database';
import { conflict, notFound } from '../../platform/errors';
import type { OrderCancelledEvent, OrderCreatedEvent, PaymentFailedEvent, PaymentRefundSucceededEvent } from '../../platform/events/topics';
import type { StockCommitRequest, StockCommitResponse, StockHoldRequest, StockHoldResponse, StockReleaseRequest, StockShortage } from '../../platform/contracts/stock';
import type { StockHoldSettings } from '../../platform/config/catalogue';
import type { Logger } from '../../platform/logger';
import { fromCents } from '../../platform/money';
import { Book, OrderStock, StockHold, type StockLineStatus } from './entities';
import { publishStockLowIfCrossed } from './events';

/** Quantities per book in the order first listed, a book listed twice counted once. */
function quantities(items: readonly { bookId: string; quantity: number }[]): Map<string, number> {
  const byBook = new Map<string, number>();
  for (const item of items) byBook.set(item.bookId.toLowerCase(), (byBook.get(item.bookId.toLowerCase()) ?? 0) + item.quantity);
  return byBook;
}

const isCommitted = (line: StockHold) => line.status === 'TAKEN' || line.status === 'SHORT';

export const notEnoughStock = (title: string, left: number) => conflict(`Not enough stock for ${title}: ${left} left`, 'NOT_ENOUGH_STOCK');
const holdLimit = (message: string) => conflict(message, 'HOLD_LIMIT');

/** The isolation of the transactions that place, take and release holds (see above). */
const READ_COMMITTED = { readCommitted: true } as const;

/**
 * Copies of each book held by live holds (HELD and within a hold's length after expiry), but those
 * of `except` payments. With `lock`, a locking read of the lines (the latest committed, see above).
 */
export async function heldCopies(
  db: Database,
  manager: EntityManager,
  bookIds: readonly string[] | 'all',
  options: { now: Date; holdMs: number; except?: readonly string[]; lock?: boolean },
): Promise<Map<string, number>> {
  const held = new Map<string, number>();
  if (bookIds !== 'all' && bookIds.length === 0) return held;
  const query = manager
    .createQueryBuilder(StockHold, 'h')
    .select('h.book_id', 'bookId')
    .addSelect('SUM(h.quantity)', 'copies')
    .where("h.status = 'HELD' AND h.expires_at > :cutoff", { cutoff: new Date(options.now.getTime() - options.holdMs) })
    .groupBy('h.book_id');
  // The whole catalogue at once reads every live hold rather than naming ten thousand books.
  if (bookIds !== 'all' && bookIds.length <= 500) query.andWhere('h.book_id IN (:...bookIds)', { bookIds });
  if (options.except && options.except.length > 0) query.andWhere('h.payment_id NOT IN (:...except)', { except: options.except });
  if (options.lock && db.kind === 'mysql') query.setLock('pessimistic_write');
  const wanted = bookIds === 'all' ? undefined : new Set(bookIds);
  for (const row of await query.getRawMany<{ bookId: string; copies: string | number }>()) {
    if (!wanted || wanted.has(row.bookId)) held.set(row.bookId, Number(row.copies));
  }
  return held;
}

export class Inventory {
  private readonly refused = new Counter({
    name: 'bookstore_stock_checkouts_refused_total',
    help: 'Checkouts refused a hold: too few copies available (reason="stock") or past the customer hold cap (reason="limit")',
    labelNames: ['reason'] as const,
    registers: [],
  });

  private readonly unfilled = new Counter({
    name: 'bookstore_stock_orders_refunded_total',
    help: 'Paid orders that found too few copies: none taken, the order cancelled and refunded in full',
    registers: [],
  });

  private readonly oversold = new Counter({
    name: 'bookstore_stock_oversold_copies_total',
    help: 'Copies an order confirmed without a take before it (an order service older than stock holds) asked beyond the stock left',
    registers: [],
  });

  private readonly holdMs: number;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly stockLowThreshold: number,
    private readonly settings: StockHoldSettings,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.holdMs = Math.round(settings.minutes * 60_000);
  }

  registerMetrics(registry: Registry): void {
    for (const metric of [this.refused, this.unfilled, this.oversold]) registry.registerMetric(metric);
  }

  /** Held copies per book, for the catalogue's answers (a plain read). */
  held(manager: EntityManager, bookIds: readonly string[] | 'all'): Promise<Map<string, number>> {
    return heldCopies(this.db, manager, bookIds, { now: this.clock(), holdMs: this.holdMs });
  }

  /**
   * An admin setting a tracked book's stock: never below the copies checkouts hold (409), so every
   * hold keeps its copies; the book is locked first, as a hold locks it.
   */
  async checkStockChange(manager: EntityManager, book: { id: string; title: string }, stock: number | null): Promise<void> {
    await this.lockBooks(manager, [book.id]);
    if (stock === null) return;
    const held = (await heldCopies(this.db, manager, [book.id], { now: this.clock(), holdMs: this.holdMs, lock: true })).get(book.id) ?? 0;
    if (stock < held) throw conflict(`Stock cannot be set below the ${held} copies held by checkouts in progress`, 'STOCK_HELD');
  }

  /** Locked for the rest of the transaction; in id order, so two transactions lock the same books in the same order. */
  private async lockBooks(manager: EntityManager, ids: Iterable<string>): Promise<Map<string, Book>> {
    const sorted = [...new Set(ids)].sort();
    if (sorted.length === 0) return new Map();
    const books = await manager.find(Book, { where: { id: In(sorted) }, order: { id: 'ASC' }, ...forUpdate(this.db) });
    return new Map(books.map((book) => [book.id, book]));
  }

  private linesOf(manager: EntityManager, paymentId: string): Promise<StockHold[]> {
    return manager.find(StockHold, { where: { paymentId }, order: { bookId: 'ASC' }, ...forUpdate(this.db) });
  }

  private isLive(line: StockHold, now: Date): boolean {
    return line.status === 'HELD' && line.expiresAt.getTime() + this.holdMs > now.getTime();
  }

  /** Writes a payment's line for a book, over the one it has. */
  private async saveLine(manager: EntityManager, existing: StockHold | undefined, line: Omit<StockHold, 'createdAt' | 'updatedAt'>, now: Date): Promise<void> {
    if (existing) await manager.update(StockHold, { paymentId: line.paymentId, bookId: line.bookId }, { ...line, updatedAt: now });
    else await manager.insert(StockHold, { ...line, createdAt: now, updatedAt: now });
  }

  async hold(request: StockHoldRequest): Promise<StockHoldResponse> {
    const paymentId = request.paymentId.toLowerCase();
    const holdId = request.holdId.toLowerCase();
    const userId = request.userId.toLowerCase();
    const wanted = quantities(request.items);
    return this.db.transaction(async (manager) => {
      await this.refuseEarly(manager, paymentId, userId, wanted);
      const now = this.clock();
      const books = await this.lockBooks(manager, wanted.keys());
      const cart = [...wanted].map(([bookId, quantity]) => {
        const book = books.get(bookId);
        if (!book) throw notFound(`Book not found: ${bookId}`, 'BOOK_NOT_FOUND');
        return { book, quantity };
      });
      const answer = (expiresAt: Date | null, replaced: string[] = []): StockHoldResponse => ({
        books: cart.map(({ book }) => ({ id: book.id, title: book.title, price: fromCents(book.priceCents), stock: book.stock })),
        expiresAt: expiresAt?.toISOString() ?? null,
        replacedPaymentIds: replaced,
      });

      const own = await this.linesOf(manager, paymentId);
      // Paid and taken already: nothing to hold.
      if (own.some(isCommitted)) return answer(null);
      const sameHold = own.filter((line) => line.holdId === holdId);
      if (sameHold.length > 0) return answer(new Date(Math.max(...sameHold.map((line) => line.expiresAt.getTime()))));
      const tracked = cart.flatMap(({ book, quantity }) => (book.stock === null ? [] : [{ book, stock: book.stock, quantity }]));
      if (tracked.length === 0) return answer(null);

      for (const { book, quantity } of tracked) {
        if (quantity > this.settings.maxPerBook) {
          this.refused.inc({ reason: 'limit' });
          throw holdLimit(`You can hold at most ${this.settings.maxPerBook} copies of ${book.title} at once`);
        }
      }
      const theirs = (await manager.find(StockHold, { where: { userId, status: 'HELD' }, ...forUpdate(this.db) })).filter(
        (line) => line.paymentId !== paymentId && this.isLive(line, now),
      );
      const replaced = [...new Set(theirs.filter((line) => wanted.has(line.bookId)).map((line) => line.paymentId))];
      const keptCopies = theirs.filter((line) => !replaced.includes(line.paymentId)).reduce((sum, line) => sum + line.quantity, 0);
      const newCopies = tracked.reduce((sum, { quantity }) => sum + quantity, 0);
      if (keptCopies + newCopies > this.settings.maxCopies) {
        this.refused.inc({ reason: 'limit' });
        throw holdLimit(`You can hold at most ${this.settings.maxCopies} copies at once: pay for or give up another checkout first (${keptCopies} held)`);
      }
      const held = await heldCopies(
        this.db,
        manager,
        tracked.map(({ book }) => book.id),
        { now, holdMs: this.holdMs, except: [paymentId, ...replaced] },
      );
      for (const { book, stock, quantity } of tracked) {
        const left = Math.max(0, stock - (held.get(book.id) ?? 0));
        if (quantity > left) {
          this.refused.inc({ reason: 'stock' });
          throw notEnoughStock(book.title, left);
        }
      }

      if (replaced.length > 0) await manager.update(StockHold, { paymentId: In(replaced), status: 'HELD' }, { status: 'RELEASED', updatedAt: now });
      // This payment's earlier hold (it expired, or its payment failed) gives way to this one.
      await manager.update(StockHold, { paymentId, status: 'HELD' }, { status: 'RELEASED', updatedAt: now });
      const expiresAt = new Date(now.getTime() + this.holdMs);
      for (const { book, quantity } of tracked) {
        const bookId = book.id;
        const existing = own.find((line) => line.bookId === bookId);
        await this.saveLine(
          manager,
          existing,
          {
            paymentId,
            bookId,
            holdId,
            userId,
            status: 'HELD',
            quantity,
            expiresAt,
            taken: 0,
            credited: existing?.credited ?? 0,
            returned: false,
            leftAtCommit: null,
          },
          now,
        );
      }
      if (replaced.length > 0) this.logger.info({ paymentId, replaced }, 'a checkout replaced the same customer’s earlier holds');
      return answer(expiresAt, replaced);
    }, READ_COMMITTED);
  }

  /**
   * A new checkout that a plain read already finds short is refused before it locks anything, even
   * counting the customer's own holds as free (a new checkout may replace them). Under a rush for a
   * book's last copies, the checkouts after the last copy is held get their 409 from this read
   * instead of each waiting its turn for the book's lock. Copies are still only ever held under the
   * lock; an unknown book, a checkout asked again and a quantity past the cap are left to it, so
   * every answer stays the one the locked path gives.
   */
  private async refuseEarly(manager: EntityManager, paymentId: string, userId: string, wanted: Map<string, number>): Promise<void> {
    if ([...wanted.values()].some((quantity) => quantity > this.settings.maxPerBook)) return;
    const books = await manager.find(Book, { where: { id: In([...wanted.keys()]) } });
    if (books.length !== wanted.size || (await manager.exists(StockHold, { where: { paymentId } }))) return;
    const tracked = books.filter((book): book is Book & { stock: number } => book.stock !== null);
    if (tracked.length === 0) return;
    const theirs = await manager.find(StockHold, { select: { paymentId: true }, where: { userId, status: 'HELD' } });
    const held = await heldCopies(
      this.db,
      manager,
      tracked.map((book) => book.id),
      { now: this.clock(), holdMs: this.holdMs, except: [...new Set(theirs.map((line) => line.paymentId))] },
    );
    for (const book of tracked) {
      const left = Math.max(0, book.stock - (held.get(book.id) ?? 0));
      if ((wanted.get(book.id) ?? 0) > left) {
        this.refused.inc({ reason: 'stock' });
        throw notEnoughStock(book.title, left);
      }
    }
  }

  /** Ends a payment's hold, or only the hold named; answers how many lines it released. */
  async release(request: StockReleaseRequest): Promise<number> {
    return this.db.transaction((manager) => this.releaseIn(manager, request.paymentId.toLowerCase(), request.holdId?.toLowerCase()), READ_COMMITTED);
  }

  private async releaseIn(manager: EntityManager, paymentId: string, holdId: string | undefined): Promise<number> {
    const where = holdId ? { paymentId, holdId, status: 'HELD' as const } : { paymentId, status: 'HELD' as const };
    const result = await manager.update(StockHold, where, { status: 'RELEASED', updatedAt: this.clock() });
    return result.affected ?? 0;
  }

  /** `payment-failed`: the copies of its hold go back at once (a hold placed since, under another id, stays). */
  async paymentFailed(manager: EntityManager, event: PaymentFailedEvent): Promise<void> {
    await this.releaseIn(manager, event.paymentId.toLowerCase(), event.holdId?.toLowerCase());
  }

  async commit(request: StockCommitRequest): Promise<StockCommitResponse> {
    return this.db.transaction((manager) => this.commitIn(manager, request, 'whole', READ_COMMITTED), READ_COMMITTED);
  }

  /**
   * `whole`: every line or none (a paid order, CONTRACT §4). `partial`: what is free of each line, the
   * rest counted as oversold (an order that was confirmed without asking first).
   */
  private async commitIn(
    manager: EntityManager,
    request: Pick<StockCommitRequest, 'paymentId' | 'userId' | 'items'>,
    mode: 'whole' | 'partial',
    isolation: { readCommitted?: boolean } = {},
  ): Promise<StockCommitResponse> {
    const paymentId = request.paymentId.toLowerCase();
    const wanted = quantities(request.items);
    const now = this.clock();
    const books = await this.lockBooks(manager, wanted.keys());
    const own = await this.linesOf(manager, paymentId);
    if (own.some(isCommitted)) return this.outcome(own, books);

    const held = await heldCopies(this.db, manager, [...books.keys()], { now, holdMs: this.holdMs, except: [paymentId], lock: !isolation.readCommitted });
    const plan: { bookId: string; book: Book; quantity: number; credited: number; take: number; left: number }[] = [];
    const shortages: StockShortage[] = [];
    for (const [bookId, quantity] of wanted) {
      const book = books.get(bookId);
      // A book deleted since: nothing of it to take.
      if (!book) continue;
      const credited = Math.min(quantity, own.find((line) => line.bookId === bookId)?.credited ?? 0);
      const need = quantity - credited;
      const left = book.stock === null ? need : Math.max(0, book.stock - (held.get(bookId) ?? 0));
      if (need > left && mode === 'whole') shortages.push({ bookId, title: book.title, quantity, left });
      plan.push({ bookId, book, quantity, credited, take: Math.min(need, left), left });
    }

    const status: StockLineStatus = shortages.length > 0 ? 'SHORT' : 'TAKEN';
    for (const line of plan) {
      const { book } = line;
      let taken = 0;
      if (status === 'TAKEN' && book.stock !== null && line.take > 0) {
        const result = await manager
          .createQueryBuilder()
          .update(Book)
          .set({ stock: () => `stock - ${line.take}`, updatedAt: now })
          .where('id = :bookId AND stock >= :take', { bookId: line.bookId, take: line.take })
          .execute();
        if (result.affected) {
          taken = line.take;
          await publishStockLowIfCrossed(manager, book, book.stock, book.stock - taken, this.stockLowThreshold);
        }
      }
      const need = line.quantity - line.credited;
      if (status === 'TAKEN' && book.stock !== null && taken < need) {
        this.oversold.inc(need - taken);
        this.logger.warn({ paymentId, bookId: line.bookId, ordered: line.quantity, taken }, 'order confirmed beyond the copies left: stock stays at zero');
      }
      const existing = own.find((held) => held.bookId === line.bookId);
      await this.saveLine(
        manager,
        existing,
        {
          paymentId,
          bookId: line.bookId,
          holdId: existing?.holdId ?? null,
          userId: request.userId.toLowerCase(),
          status,
          quantity: line.quantity,
          expiresAt: existing?.expiresAt ?? now,
          taken,
          credited: line.credited,
          returned: false,
          leftAtCommit: shortages.some((short) => short.bookId === line.bookId) ? line.left : null,
        },
        now,
      );
    }
    if (shortages.length > 0) {
      this.unfilled.inc();
      this.logger.warn({ paymentId, shortages }, 'a paid order found too few copies: none taken, it is to be refunded');
    }
    return { filled: shortages.length === 0, shortages };
  }

  private outcome(own: StockHold[], books: Map<string, Book>): StockCommitResponse {
    const shortages = own.flatMap((line) =>
      line.status === 'SHORT' && line.leftAtCommit !== null
        ? [{ bookId: line.bookId, title: books.get(line.bookId)?.title ?? line.bookId, quantity: line.quantity, left: line.leftAtCommit }]
        : [],
    );
    return { filled: !own.some((line) => line.status === 'SHORT'), shortages };
  }

  /**
   * `order-created`: the order service took the copies before confirming (`commit`). An order that
   * comes without that (an order service from before stock holds) takes what is free now.
   */
  async orderCreated(manager: EntityManager, event: OrderCreatedEvent): Promise<void> {
    const own = await this.linesOf(manager, event.paymentId.toLowerCase());
    if (own.some(isCommitted)) return;
    if ((await manager.count(OrderStock, { where: { orderId: event.orderId.toLowerCase() } })) > 0) return;
    await this.commitIn(manager, { paymentId: event.paymentId, userId: event.userId, items: event.items }, 'partial');
  }

  /** `order-cancelled`: what the order took goes back, once. */
  async orderCancelled(manager: EntityManager, event: OrderCancelledEvent): Promise<void> {
    const books = await this.lockBooks(manager, quantities(event.items).keys());
    const own = await this.linesOf(manager, event.paymentId.toLowerCase());
    if (!own.some(isCommitted)) {
      await this.cancelTakenByOrder(manager, event);
      return;
    }
    const now = this.clock();
    for (const line of own) {
      if (line.status !== 'TAKEN' || line.returned) continue;
      if (line.taken > 0) await this.putBack(manager, books.get(line.bookId), line.bookId, line.taken, now);
      await manager.update(StockHold, { paymentId: line.paymentId, bookId: line.bookId }, { returned: true, updatedAt: now });
    }
  }

  /** The cancel of an order taken before stock holds, by its order id. */
  private async cancelTakenByOrder(manager: EntityManager, event: OrderCancelledEvent): Promise<void> {
    const orderId = event.orderId.toLowerCase();
    const lines = await manager.find(OrderStock, { where: { orderId }, ...forUpdate(this.db) });
    if (lines.length === 0) {
      // Cancelled before its creation was consumed (two topics, no order between them): nothing
      // was taken, and the late order-created must take nothing either.
      for (const bookId of quantities(event.items).keys()) await manager.insert(OrderStock, { orderId, bookId, taken: 0, returned: true });
      return;
    }
    for (const line of lines) {
      if (line.returned) continue;
      if (line.taken > 0) await this.putBack(manager, undefined, line.bookId, line.taken, this.clock());
      await manager.update(OrderStock, { orderId, bookId: line.bookId }, { returned: true });
    }
  }

  private async putBack(manager: EntityManager, book: Book | undefined, bookId: string, copies: number, now: Date): Promise<void> {
    if (book && book.stock === null) return;
    await manager
      .createQueryBuilder()
      .update(Book)
      .set({ stock: () => `stock + ${copies}`, updatedAt: now })
      .where('id = :bookId AND stock IS NOT NULL', { bookId })
      .execute();
  }

  /**
   * `payment-refund-succeeded` with `restock`: the refunded copies come off what the payment's order
   * took and go back on the shelf; before the order took anything, they are recorded against the
   * payment so that its take leaves them there. Never more than was taken, nothing once the order's
   * cancel put its copies back.
   */
  async refundSucceeded(manager: EntityManager, event: PaymentRefundSucceededEvent): Promise<void> {
    if (!event.restock) return;
    const paymentId = event.paymentId.toLowerCase();
    const orderId = event.orderId?.toLowerCase() ?? '';
    const wanted = quantities(event.items);
    const books = await this.lockBooks(manager, wanted.keys());
    const own = await this.linesOf(manager, paymentId);
    const committed = own.some(isCommitted);
    const legacy = !committed && orderId ? await manager.find(OrderStock, { where: { orderId }, ...forUpdate(this.db) }) : [];
    const now = this.clock();
    for (const [bookId, quantity] of wanted) {
      const book = books.get(bookId);
      if (!book) {
        this.logger.warn({ refundId: event.refundId, paymentId, bookId, quantity }, 'refunded copies of a deleted book not put back in stock');
        continue;
      }
      if (book.stock === null) continue;
      const line = own.find((held) => held.bookId === bookId);
      const old = legacy.find((taken) => taken.bookId === bookId);
      if (committed) {
        if (!line || line.status !== 'TAKEN' || line.returned) continue;
        const copies = Math.min(quantity, line.taken);
        if (copies === 0) continue;
        await manager.update(StockHold, { paymentId, bookId }, { taken: line.taken - copies, updatedAt: now });
        await this.putBack(manager, book, bookId, copies, now);
      } else if (old) {
        const copies = old.returned ? 0 : Math.min(quantity, old.taken);
        if (copies === 0) continue;
        await manager.update(OrderStock, { orderId, bookId }, { taken: old.taken - copies });
        await this.putBack(manager, book, bookId, copies, now);
      } else {
        // Before the order took anything: its take will leave these copies on the shelf.
        await this.saveLine(
          manager,
          line,
          line
            ? { ...line, credited: line.credited + quantity }
            : {
                paymentId,
                bookId,
                holdId: null,
                userId: event.userId.toLowerCase(),
                status: 'RELEASED',
                quantity: 0,
                expiresAt: now,
                taken: 0,
                credited: quantity,
                returned: false,
                leftAtCommit: null,
              },
          now,
        );
      }
    }
  }
}
