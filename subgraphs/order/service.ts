/**
 * Orders: created once per successful payment (from `payment-success`), read by their owner or an
 * admin, moved along CONFIRMED → PROCESSING → SHIPPED → DELIVERED by an admin, and cancelled from
 * CONFIRMED or PROCESSING by the owner or an admin. A cancel, whichever route asks for it, publishes
 * `order-cancelled` in the same transaction, which has the payment refunded and the stock put back.
 * A refund reported by the payment (`payment-refunded`) makes an order REFUNDED unless it was
 * cancelled: a cancelled order stays CANCELLED, its payment shows the refund. `refundStatus` follows
 * the money: PENDING from the cancel, REFUNDED on `payment-refunded`, FAILED on `payment-refund-failed`.
 * The refund is also remembered: topics are not ordered with each other, and a payment-success that
 * arrives after its refund makes no order at all (one order per successful payment, none for a
 * refunded one).
 */
import { randomUUID } from 'node:crypto';
import { In, Not, type EntityManager } from 'typeorm';
import { forUpdate, type Database } from '../../platform/database';
import { fromCents, toCents } from '../../platform/money';
import type { PaymentRefundFailedEvent, PaymentRefundSucceededEvent, PaymentRefundedEvent, PaymentSuccessEvent } from '../../platform/events/topics';
import type { Logger } from '../../platform/logger';
import { assertRole, isSelfOrAdmin, type Principal } from '../../platform/auth';
import { AppError, conflict, contractTimestamp, forbidden, notFound } from '../../platform/errors';
import { ORDER_STATUSES, Order, OrderItem, RefundedPayment, type OrderStatus, type RefundStatus } from './entities';
import { publishOrderCancelled, publishOrderCreated, publishOrderStatusChanged } from './events';
import { outOfStockReason, type OrderStock } from './stock';

export interface OrderItemResponse {
  bookId: string;
  bookTitle: string;
  quantity: number;
  price: number;
}

export interface OrderResponse {
  orderId: string;
  paymentId: string;
  userId: string;
  totalAmount: number;
  status: OrderStatus;
  /** Null when no refund is involved. */
  refundStatus: RefundStatus | null;
  /** Why we cancelled it, when it was not the customer or an admin (out of stock); else null. */
  cancellationReason: string | null;
  items: OrderItemResponse[];
  createdAt: string;
  updatedAt: string;
}

/** The forward moves an admin may make; REFUNDED comes only from the payment. */
const NEXT: Record<OrderStatus, readonly OrderStatus[]> = {
  CONFIRMED: ['PROCESSING', 'CANCELLED'],
  PROCESSING: ['SHIPPED', 'CANCELLED'],
  SHIPPED: ['DELIVERED'],
  DELIVERED: [],
  CANCELLED: [],
  REFUNDED: [],
};

/** Where the owner or an admin may cancel from: before the parcel leaves. */
const CANCELLABLE: readonly OrderStatus[] = ORDER_STATUSES.filter((status) => NEXT[status].includes('CANCELLED'));

export interface OrderPage {
  orders: OrderResponse[];
  /** Every order matching the filter, whatever the page. */
  total: number;
}

export function allowedTransitions(status: OrderStatus): readonly OrderStatus[] {
  return NEXT[status];
}

const orderNotFound = (id: string) => notFound(`Order not found: ${id}`, 'ORDER_NOT_FOUND');
const othersOrders = () => forbidden("Cannot access another user's orders");

function toResponse(order: Order, items: OrderItem[]): OrderResponse {
  return {
    orderId: order.id,
    paymentId: order.paymentId,
    userId: order.userId,
    totalAmount: fromCents(order.totalCents),
    status: order.status,
    refundStatus: order.refundStatus,
    cancellationReason: order.cancellationReason,
    items: items
      .sort((a, b) => a.position - b.position)
      .map((item) => ({ bookId: item.bookId, bookTitle: item.bookTitle, quantity: item.quantity, price: fromCents(item.unitPriceCents) })),
    createdAt: contractTimestamp(order.createdAt),
    updatedAt: contractTimestamp(order.updatedAt),
  };
}

/** The e-mails that go with an order's changes (order-mail.ts), recorded in the same transactions. */
export interface OrderMailEffects {
  confirmed(manager: EntityManager, event: PaymentSuccessEvent, order: Order): Promise<void>;
  unfilled(manager: EntityManager, event: PaymentSuccessEvent, order: Order): Promise<void>;
  refunded(manager: EntityManager, event: PaymentRefundedEvent): Promise<void>;
  shipped(manager: EntityManager, order: Order, trackingNumber: string | null): Promise<void>;
  refundSucceeded(manager: EntityManager, event: PaymentRefundSucceededEvent): Promise<void>;
}

export class OrderService {
  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly stock: OrderStock,
    private readonly mail?: OrderMailEffects,
  ) {}

  private async withItems(orders: Order[]): Promise<OrderResponse[]> {
    if (orders.length === 0) return [];
    const items = await this.db.manager.find(OrderItem, { where: { orderId: In(orders.map((o) => o.id)) } });
    return orders.map((order) =>
      toResponse(
        order,
        items.filter((item) => item.orderId === order.id),
      ),
    );
  }

  /** Owner or ADMIN; anyone else is told it does not exist. */
  private visible(principal: Principal, order: Order | null): order is Order {
    return order !== null && (principal.role === 'ADMIN' || order.userId === principal.userId);
  }

  async getOrder(principal: Principal, id: string): Promise<OrderResponse> {
    const order = await this.db.manager.findOne(Order, { where: { id } });
    if (!this.visible(principal, order)) throw orderNotFound(id);
    return (await this.withItems([order]))[0];
  }

  async getOrderForPayment(principal: Principal, paymentId: string): Promise<OrderResponse> {
    const order = await this.db.manager.findOne(Order, { where: { paymentId } });
    if (!this.visible(principal, order)) throw notFound(`Order not ready for payment: ${paymentId}`, 'ORDER_NOT_READY');
    return (await this.withItems([order]))[0];
  }

  /** Batch lookup for federation references and the payment's order field, unfiltered. */
  async findByIds(ids: readonly string[]): Promise<OrderResponse[]> {
    return ids.length === 0 ? [] : this.withItems(await this.db.manager.find(Order, { where: { id: In([...ids]) } }));
  }

  /**
   * Batch read for GraphQL references, in the order of `ids`, with `getOrder`'s rule: owner or
   * ADMIN, and anyone else is told it does not exist. One query for the orders, one for their items.
   */
  async ordersFor(principal: Principal, ids: readonly string[]): Promise<(OrderResponse | AppError)[]> {
    const rows = ids.length === 0 ? [] : await this.db.manager.find(Order, { where: { id: In([...ids]) } });
    const visible = await this.withItems(rows.filter((order) => this.visible(principal, order)));
    const byId = new Map(visible.map((order) => [order.orderId, order]));
    return ids.map((id) => byId.get(id) ?? orderNotFound(id));
  }

  /**
   * Batch read of each user's orders, newest first, in the order of `userIds`: for the user
   * themself or an ADMIN, FORBIDDEN otherwise. One query for every user's orders.
   */
  async ordersOfUsers(principal: Principal, userIds: readonly string[]): Promise<(OrderResponse[] | AppError)[]> {
    const allowed = userIds.filter((userId) => isSelfOrAdmin(principal, userId));
    const rows = allowed.length === 0 ? [] : await this.db.manager.find(Order, { where: { userId: In(allowed) }, order: { createdAt: 'DESC', id: 'ASC' } });
    const orders = await this.withItems(rows);
    return userIds.map((userId) => (isSelfOrAdmin(principal, userId) ? orders.filter((order) => order.userId === userId) : othersOrders()));
  }

  async listMine(principal: Principal): Promise<OrderResponse[]> {
    return this.listOfUser(principal, principal.userId);
  }

  /** One user's orders, newest first: the user themself or an ADMIN. */
  async listOfUser(principal: Principal, userId: string): Promise<OrderResponse[]> {
    if (!isSelfOrAdmin(principal, userId)) throw othersOrders();
    return this.withItems(await this.db.manager.find(Order, { where: { userId }, order: { createdAt: 'DESC', id: 'ASC' } }));
  }

  /** Every order, newest first (ADMIN); without a limit, all of them. */
  async listAll(principal: Principal, page: { limit?: number; offset: number; status?: OrderStatus }): Promise<OrderPage> {
    assertRole(principal, 'ADMIN');
    const [orders, total] = await this.db.manager.findAndCount(Order, {
      where: page.status ? { status: page.status } : {},
      order: { createdAt: 'DESC', id: 'ASC' },
      // MySQL has no OFFSET without LIMIT: an offset alone reads to the end.
      take: page.limit ?? (page.offset > 0 ? Number.MAX_SAFE_INTEGER : undefined),
      skip: page.offset > 0 ? page.offset : undefined,
    });
    return { orders: await this.withItems(orders), total };
  }

  /**
   * Cancels an order of the caller (or any order, for an ADMIN; anyone else is told it does not
   * exist): CONFIRMED or PROCESSING become CANCELLED and `order-cancelled` is recorded with them.
   */
  async cancel(principal: Principal, id: string): Promise<OrderResponse> {
    const order = await this.db.transaction(async (manager) => {
      // Locked, so that of two cancels at once the second sees CANCELLED (SQLite transactions already queue).
      const current = await manager.findOne(Order, { where: { id }, ...forUpdate(this.db) });
      if (!this.visible(principal, current)) throw orderNotFound(id);
      if (!CANCELLABLE.includes(current.status)) throw conflict(`Order cannot be cancelled in status: ${current.status}`, 'ORDER_NOT_CANCELLABLE');
      return this.moveTo(manager, current, 'CANCELLED');
    });
    return (await this.withItems([order]))[0];
  }

  /**
   * Writes `status` if the order is still in the status it was read in, so two concurrent moves
   * from one state serialise; every move records `order-status-changed`, and a move to CANCELLED
   * `order-cancelled` too, in the same transaction.
   */
  private async moveTo(manager: EntityManager, current: Order, status: OrderStatus, trackingNumber: string | null = null): Promise<Order> {
    // Every order was paid, so a cancel always has a refund to wait for.
    const refund = status === 'CANCELLED' ? { refundStatus: 'PENDING' as const } : {};
    const result = await manager.update(Order, { id: current.id, status: current.status }, { status, ...refund, updatedAt: new Date() });
    if (result.affected !== 1) throw conflict(`Order ${current.id} changed meanwhile; read it again`, 'INVALID_ORDER_TRANSITION');
    const items = toResponse(current, await manager.find(OrderItem, { where: { orderId: current.id } })).items;
    await publishOrderStatusChanged(manager, current, items, status);
    if (status === 'CANCELLED') {
      await publishOrderCancelled(manager, current, items);
      this.logger.info({ orderId: current.id, paymentId: current.paymentId }, 'order cancelled');
    }
    if (status === 'SHIPPED') await this.mail?.shipped(manager, current, trackingNumber);
    return manager.findOneOrFail(Order, { where: { id: current.id } });
  }

  async updateStatus(principal: Principal, id: string, status: OrderStatus, trackingNumber: string | null = null): Promise<OrderResponse> {
    assertRole(principal, 'ADMIN');
    const order = await this.db.transaction(async (manager) => {
      const current = await manager.findOne(Order, { where: { id } });
      if (!current) throw orderNotFound(id);
      if (!NEXT[current.status].includes(status)) {
        throw new AppError('INVALID_ORDER_TRANSITION', `Order ${id} cannot move from ${current.status} to ${status}`, 409);
      }
      return this.moveTo(manager, current, status, trackingNumber);
    });
    return (await this.withItems([order]))[0];
  }

  /**
   * `payment-success`: one order per payment, whatever the number of deliveries, and none for a
   * payment already reported refunded. The refund's row is read with a lock (on MySQL, of its gap
   * when there is none yet), so a refund committing meanwhile waits and then finds this order.
   */
  async createFromPayment(manager: EntityManager, event: PaymentSuccessEvent): Promise<void> {
    const paymentId = event.paymentId.toLowerCase();
    if (await manager.findOne(RefundedPayment, { where: { paymentId }, ...forUpdate(this.db) })) {
      this.logger.info({ paymentId }, 'payment-success after its refund; no order made');
      return;
    }
    if (await manager.findOne(Order, { where: { paymentId } })) return;
    // Asked inside the transaction, after the refund's row is locked: a refund committing meanwhile
    // waits and then finds this order, so no copies are taken for a payment that makes no order.
    const stock = await this.stock.commit({
      paymentId,
      userId: event.userId,
      items: event.items.map((item) => ({ bookId: item.bookId, quantity: item.quantity })),
    });
    const now = new Date();
    const order = Object.assign(new Order(), {
      id: randomUUID(),
      paymentId,
      userId: event.userId.toLowerCase(),
      totalCents: toCents(event.amount),
      status: stock.filled ? ('CONFIRMED' as const) : ('CANCELLED' as const),
      refundStatus: stock.filled ? null : ('PENDING' as const),
      cancellationReason: stock.filled ? null : outOfStockReason(stock.shortages),
      createdAt: now,
      updatedAt: now,
    });
    await manager.insert(Order, order);
    await manager.insert(
      OrderItem,
      event.items.map((item, position) => ({
        orderId: order.id,
        bookId: item.bookId.toLowerCase(),
        bookTitle: item.bookTitle,
        quantity: item.quantity,
        unitPriceCents: toCents(item.price),
        position,
      })),
    );
    await publishOrderCreated(manager, order, event.items, event.amount);
    if (stock.filled) {
      await this.mail?.confirmed(manager, event, order);
      this.logger.info({ orderId: order.id, paymentId }, 'order created');
      return;
    }
    // Paid, but its copies were gone: cancelled as it is made, which refunds it in full (the
    // payment service, on order-cancelled) and tells the customer why at once.
    await publishOrderCancelled(manager, order, event.items);
    await this.mail?.unfilled(manager, event, order);
    this.logger.warn({ orderId: order.id, paymentId, shortages: stock.shortages }, 'order paid for copies that are gone: cancelled and refunded in full');
  }

  /**
   * `payment-refunded`: the refund is remembered first (the row createFromPayment locks, so of the two
   * the later one sees the other), then the order, if any, becomes REFUNDED, unless it was cancelled
   * (the refund is the cancel's).
   */
  async markRefunded(manager: EntityManager, event: PaymentRefundedEvent): Promise<void> {
    const paymentId = event.paymentId.toLowerCase();
    const now = new Date();
    await manager.createQueryBuilder().insert().into(RefundedPayment).values({ paymentId, refundedAt: now }).orIgnore().execute();
    await manager.update(Order, { paymentId }, { refundStatus: 'REFUNDED', updatedAt: now });
    const result = await manager.update(Order, { paymentId, status: Not('CANCELLED') }, { status: 'REFUNDED', updatedAt: now });
    if (result.affected === 0) this.logger.info({ paymentId }, 'refund reported for a payment with no open order');
    await this.mail?.refunded(manager, event);
  }

  /**
   * `payment-refund-succeeded`: a refund of part of the order changes neither its status nor its
   * refundStatus (those follow a cancel or a refund in full, `payment-refunded`); it is told to the
   * customer by e-mail (order-mail.ts says which refunds are).
   */
  async refundSucceeded(manager: EntityManager, event: PaymentRefundSucceededEvent): Promise<void> {
    await this.mail?.refundSucceeded(manager, event);
  }

  /**
   * `payment-refund-failed`: the refund waits for an admin. Never over REFUNDED: the two topics are
   * not ordered, and a refund that succeeded (after a retry) is the last word. But a reversal that
   * took the payment out of REFUNDED (`full`) is later than the refund it reverses: the order's
   * refund is FAILED again, whatever its refundStatus.
   */
  async markRefundFailed(manager: EntityManager, event: PaymentRefundFailedEvent): Promise<void> {
    const paymentId = event.paymentId.toLowerCase();
    if (event.refundId !== undefined) {
      if (event.full) await manager.update(Order, { paymentId }, { refundStatus: 'FAILED', updatedAt: new Date() });
      this.logger.warn(
        { orderId: event.orderId, paymentId, refundId: event.refundId, full: event.full },
        'a refund that had succeeded failed at the provider; it waits for an admin',
      );
      return;
    }
    await manager.update(Order, { id: (event.orderId ?? '').toLowerCase(), refundStatus: Not('REFUNDED') }, { refundStatus: 'FAILED', updatedAt: new Date() });
    this.logger.warn({ orderId: event.orderId, paymentId, reason: event.reason }, 'the refund of a cancelled order failed; it waits for an admin');
  }
}
