/** GraphQL resolvers of the order subgraph, as thin as routes.ts: parse, authorize, call the service. */
import type DataLoader from 'dataloader';
import { MoneyScalar, batchLoader, requireAuth, type MapperCovers, type SubgraphContext } from '../../platform/subgraph';
import type { Principal } from '../../platform/auth';
import { parseLimitOffsetArgs, parseUuid } from '../../platform/validation';
import { parseTrackingNumber } from './order-mail';
import type { OrderItemResolvers, OrderResolvers, Resolvers } from './generated/resolvers-types';
import { allowedTransitions, type OrderItemResponse, type OrderResponse, type OrderService } from './service';
import type { WebhookService } from './webhooks/service';
import { webhookResolvers } from './webhooks/resolvers';

export interface OrderLoaders {
  /** Orders the caller may read, by orderId (references from other subgraphs). */
  orders: DataLoader<string, OrderResponse>;
  /** Each user's orders, by userId (`User.orders`). */
  ordersOfUser: DataLoader<string, OrderResponse[]>;
}

type Ctx = SubgraphContext<OrderLoaders>;

/** The DTOs the generated types put in place of the SDL's types (schema/codegen.ts) have every field no resolver here computes. */
export type OrderMappers = [MapperCovers<OrderResolvers, OrderResponse, 'payment' | 'user' | 'allowedNextStatuses'>, MapperCovers<OrderItemResolvers, OrderItemResponse, 'book'>];

export function orderLoaders(service: OrderService): (principal: Principal | null) => OrderLoaders {
  return (principal) => ({
    orders: batchLoader(principal, (caller, ids) => service.ordersFor(caller, ids)),
    ordersOfUser: batchLoader(principal, (caller, userIds) => service.ordersOfUsers(caller, userIds)),
  });
}

export function orderResolvers(service: OrderService, webhooks: WebhookService): Resolvers<Ctx> {
  const hooks = webhookResolvers(webhooks);
  return {
    Money: MoneyScalar,
    WebhookDelivery: hooks.WebhookDelivery,
    Query: {
      ...hooks.Query,
      orders: async (_, args, ctx) => {
        const principal = requireAuth(ctx);
        const page = parseLimitOffsetArgs(args, { limit: 50, maxLimit: 200 });
        return (await service.listAll(principal, { ...page, status: args.status ?? undefined })).orders;
      },
      order: (_, args, ctx) => {
        const principal = requireAuth(ctx);
        return service.getOrder(principal, parseUuid(args.orderId, 'orderId'));
      },
      myOrders: (_, __, ctx) => service.listMine(requireAuth(ctx)),
    },
    Mutation: {
      ...hooks.Mutation,
      updateOrderStatus: (_, args, ctx) => {
        const principal = requireAuth(ctx);
        const orderId = parseUuid(args.orderId, 'orderId');
        // Absent and null alike mean none, as an absent query parameter does in REST.
        const trackingNumber = parseTrackingNumber(args.trackingNumber ?? undefined, args.status);
        return service.updateStatus(principal, orderId, args.status, trackingNumber);
      },
      cancelOrder: (_, args, ctx) => {
        const principal = requireAuth(ctx);
        return service.cancel(principal, parseUuid(args.orderId, 'orderId'));
      },
    },
    Order: {
      __resolveReference: (reference, ctx) => {
        requireAuth(ctx);
        return ctx.loaders.orders.load(reference.orderId);
      },
      payment: (order) => ({ paymentId: order.paymentId }),
      user: (order) => ({ userId: order.userId }),
      allowedNextStatuses: (order) => allowedTransitions(order.status),
    },
    OrderItem: {
      book: (item) => ({ id: item.bookId }),
    },
    User: {
      orders: (user, _, ctx) => {
        requireAuth(ctx);
        return ctx.loaders.ordersOfUser.load(user.userId);
      },
    },
  };
}
