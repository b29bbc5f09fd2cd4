/**
 * Orders: created once per successful payment (from `payment-success`), read by their owner or an
 * admin, moved along CONFIRMED → PROCESSING → SHIPPED → DELIVERED (or CANCELLED before SHIPPED) by
 * an admin, and REFUNDED when the payment is refunded.
 */
import { randomUUID } from 'node:crypto';
import { In, type EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import { fromCents, toCents } from '../../platform/money';
import { enqueueEvent, eventEnvelope } from '../../platform/events/outbox';
import { TOPICS, type OrderCreatedEvent, type PaymentRefundedEvent, type PaymentSuccessEvent } from '../../platform/events/topics';
import type { Logger } from '../../platform/logger';
import { assertRole, isSelfOrAdmin, type Principal } from '../../rest-compat/auth';
import { AppError, contractTimestamp, forbidden, notFound } from '../../rest-compat/errors';
import { Order, OrderItem, type OrderStatus } from './entities';

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

export function allowedTransitions(status: OrderStatus): readonly OrderStatus[] {
  return NEXT[status];
}

const orderNotFound = (id: string) => notFound(`Order not found: ${id}`, 'ORDER_NOT_FOUND');

function toResponse(order: Order, items: OrderItem[]): OrderResponse {
  return {
    orderId: order.id,
    paymentId: order.paymentId,
    userId: order.userId,
    totalAmount: fromCents(order.totalCents),
    status: order.status,
    items: items
      .sort((a, b) => a.position - b.position)
      .map((item) => ({ bookId: item.bookId, bookTitle: item.bookTitle, quantity: item.quantity, price: fromCents(item.unitPriceCents) })),
    createdAt: contractTimestamp(order.createdAt),
    updatedAt: contractTimestamp(order.updatedAt),
  };
}

export class OrderService {
  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly onEventsCommitted: () => void,
  ) {}

  private async withItems(orders: Order[]): Promise<OrderResponse[]> {
    if (orders.length === 0) return [];
    const items = await this.db.manager.find(OrderItem, { where: { orderId: In(orders.map((o) => o.id)) } });
    return orders.map((order) => toResponse(order, items.filter((item) => item.orderId === order.id)));
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
    return userIds.map((userId) => (isSelfOrAdmin(principal, userId) ? orders.filter((order) => order.userId === userId) : forbidden()));
  }

  async listMine(principal: Principal): Promise<OrderResponse[]> {
    return this.withItems(await this.db.manager.find(Order, { where: { userId: principal.userId }, order: { createdAt: 'DESC', id: 'ASC' } }));
  }

  async listAll(principal: Principal, page: { limit: number; offset: number; status?: OrderStatus }): Promise<OrderResponse[]> {
    assertRole(principal, 'ADMIN');
    const orders = await this.db.manager.find(Order, {
      where: page.status ? { status: page.status } : {},
      order: { createdAt: 'DESC', id: 'ASC' },
      take: page.limit,
      skip: page.offset,
    });
    return this.withItems(orders);
  }

  async updateStatus(principal: Principal, id: string, status: OrderStatus): Promise<OrderResponse> {
    assertRole(principal, 'ADMIN');
    const order = await this.db.transaction(async (manager) => {
      const current = await manager.findOne(Order, { where: { id } });
      if (!current) throw orderNotFound(id);
      if (!NEXT[current.status].includes(status)) {
        throw new AppError('INVALID_ORDER_TRANSITION', `Order ${id} cannot move from ${current.status} to ${status}`, 409);
      }
      // The condition on the old status makes two concurrent moves from one state serialise.
      const result = await manager.update(Order, { id, status: current.status }, { status, updatedAt: new Date() });
      if (result.affected !== 1) throw new AppError('INVALID_ORDER_TRANSITION', `Order ${id} changed meanwhile; read it again`, 409);
      return manager.findOneOrFail(Order, { where: { id } });
    });
    return (await this.withItems([order]))[0];
  }

  /** `payment-success`: one order per payment, whatever the number of deliveries. */
  async createFromPayment(manager: EntityManager, event: PaymentSuccessEvent): Promise<void> {
    const paymentId = event.paymentId.toLowerCase();
    if (await manager.findOne(Order, { where: { paymentId } })) return;
    const now = new Date();
    const order = Object.assign(new Order(), {
      id: randomUUID(),
      paymentId,
      userId: event.userId.toLowerCase(),
      totalCents: toCents(event.amount),
      status: 'CONFIRMED' as const,
      createdAt: now,
      updatedAt: now,
    });
    await manager.insert(Order, order);
    await manager.insert(
      OrderItem,
      event.items.map((item, position) => ({ orderId: order.id, bookId: item.bookId.toLowerCase(), bookTitle: item.bookTitle, quantity: item.quantity, unitPriceCents: toCents(item.price), position })),
    );
    const created: OrderCreatedEvent = {
      ...eventEnvelope('OrderCreatedEvent'),
      orderId: order.id,
      paymentId,
      userId: order.userId,
      totalAmount: event.amount,
      items: event.items,
      status: order.status,
    };
    await enqueueEvent(manager, TOPICS.orderCreated, order.id, created);
    this.logger.info({ orderId: order.id, paymentId }, 'order created');
  }

  /** `payment-refunded`: the order, if any, becomes REFUNDED. */
  async markRefunded(manager: EntityManager, event: PaymentRefundedEvent): Promise<void> {
    await manager.update(Order, { paymentId: event.paymentId.toLowerCase() }, { status: 'REFUNDED', updatedAt: new Date() });
  }

  eventsCommitted(): void {
    this.onEventsCommitted();
  }
}
