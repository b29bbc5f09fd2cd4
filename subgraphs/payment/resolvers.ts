/** GraphQL resolvers of the payment subgraph, as thin as routes.ts: parse, authorize, call the service. */
import type DataLoader from 'dataloader';
import { MoneyScalar, batchLoader, requireAuth, type MapperCovers, type SubgraphContext } from '../../platform/subgraph';
import type { Principal } from '../../platform/auth';
import { parseUuid, validateBody } from '../../platform/validation';
import { CreateRefundRequest, type PaymentItemResponse } from './dto';
import type { PaymentItemResolvers, PaymentResolvers, Resolvers } from './generated/resolvers-types';
import type { Refunds } from './refunds';
import type { PaymentService, PaymentView } from './service';

export interface PaymentLoaders {
  /** Payments the caller may read, by paymentId (`payment` and references from other subgraphs). */
  payments: DataLoader<string, PaymentView>;
  /** Each user's payments, by userId (`User.payments`, `myPayments`). */
  paymentsOfUser: DataLoader<string, PaymentView[]>;
}

type Ctx = SubgraphContext<PaymentLoaders>;

/** The DTOs the generated types put in place of the SDL's types (schema/codegen.ts) have every field no resolver here computes. */
export type PaymentMappers = [MapperCovers<PaymentResolvers, PaymentView, 'user' | 'order'>, MapperCovers<PaymentItemResolvers, PaymentItemResponse, 'book'>];

export function paymentLoaders(service: PaymentService): (principal: Principal | null) => PaymentLoaders {
  return (principal) => ({
    payments: batchLoader(principal, (caller, ids) => service.paymentsFor(caller, ids)),
    paymentsOfUser: batchLoader(principal, (caller, userIds) => service.paymentsOfUsers(caller, userIds)),
  });
}

export function paymentResolvers(refunds: Refunds): Resolvers<Ctx> {
  return {
    Money: MoneyScalar,
    Query: {
      payment: (_, args, ctx) => {
        requireAuth(ctx);
        return ctx.loaders.payments.load(parseUuid(args.paymentId, 'paymentId'));
      },
      myPayments: (_, __, ctx) => ctx.loaders.paymentsOfUser.load(requireAuth(ctx).userId),
      failedRefunds: (_, __, ctx) => refunds.list(requireAuth(ctx), 'FAILED'),
    },
    Mutation: {
      retryRefund: (_, args, ctx) => refunds.retry(requireAuth(ctx), parseUuid(args.refundId, 'refundId')),
      refundPayment: async (_, { paymentId, input }, ctx) => {
        const principal = requireAuth(ctx);
        // The same checks as the REST body: Money arrives as exact decimal text, null as absent.
        const body = {
          ...(input.amount != null ? { amount: Number(input.amount) } : {}),
          ...(input.items != null ? { items: input.items } : {}),
          reason: input.reason,
          ...(input.note != null ? { note: input.note } : {}),
          ...(input.restock != null ? { restock: input.restock } : {}),
        };
        return refunds.create(principal, parseUuid(paymentId, 'paymentId'), await validateBody(CreateRefundRequest, body));
      },
    },
    Payment: {
      __resolveReference: (reference, ctx) => {
        requireAuth(ctx);
        return ctx.loaders.payments.load(reference.paymentId);
      },
      user: (payment) => ({ userId: payment.userId }),
      order: (payment) => (payment.orderId ? { orderId: payment.orderId } : null),
    },
    PaymentItem: {
      book: (item) => ({ id: item.bookId }),
    },
    User: {
      payments: (user, _, ctx) => {
        requireAuth(ctx);
        return ctx.loaders.paymentsOfUser.load(user.userId);
      },
    },
  };
}
