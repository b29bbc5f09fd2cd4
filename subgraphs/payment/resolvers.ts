/** GraphQL resolvers of the payment subgraph, as thin as routes.ts: parse, authorize, call the service. */
import type DataLoader from 'dataloader';
import { MoneyScalar, batchLoader, requireAuth, type SubgraphContext, type SubgraphResolvers } from '../../platform/subgraph';
import type { Principal } from '../../platform/auth';
import { parseUuid } from '../../platform/validation';
import type { PaymentItemResponse } from './dto';
import type { Refunds } from './refunds';
import type { PaymentService, PaymentView } from './service';

export interface PaymentLoaders {
  /** Payments the caller may read, by paymentId (`payment` and references from other subgraphs). */
  payments: DataLoader<string, PaymentView>;
  /** Each user's payments, by userId (`User.payments`, `myPayments`). */
  paymentsOfUser: DataLoader<string, PaymentView[]>;
}

type Ctx = SubgraphContext<PaymentLoaders>;

export function paymentLoaders(service: PaymentService): (principal: Principal | null) => PaymentLoaders {
  return (principal) => ({
    payments: batchLoader(principal, (caller, ids) => service.paymentsFor(caller, ids)),
    paymentsOfUser: batchLoader(principal, (caller, userIds) => service.paymentsOfUsers(caller, userIds)),
  });
}

export function paymentResolvers(refunds: Refunds): SubgraphResolvers<PaymentLoaders> {
  return {
    Money: MoneyScalar,
    Query: {
      payment: (_: unknown, args: { paymentId: string }, ctx: Ctx) => {
        requireAuth(ctx);
        return ctx.loaders.payments.load(parseUuid(args.paymentId, 'paymentId'));
      },
      myPayments: (_: unknown, __: unknown, ctx: Ctx) => ctx.loaders.paymentsOfUser.load(requireAuth(ctx).userId),
      failedRefunds: (_: unknown, __: unknown, ctx: Ctx) => refunds.list(requireAuth(ctx), 'FAILED'),
    },
    Mutation: {
      retryRefund: (_: unknown, args: { refundId: string }, ctx: Ctx) => refunds.retry(requireAuth(ctx), parseUuid(args.refundId, 'refundId')),
    },
    Payment: {
      __resolveReference: (reference: { paymentId: string }, ctx: Ctx) => {
        requireAuth(ctx);
        return ctx.loaders.payments.load(reference.paymentId);
      },
      user: (payment: PaymentView) => ({ userId: payment.userId }),
      order: (payment: PaymentView) => (payment.orderId ? { orderId: payment.orderId } : null),
    },
    PaymentItem: {
      book: (item: PaymentItemResponse) => ({ id: item.bookId }),
    },
    User: {
      payments: (user: { userId: string }, _: unknown, ctx: Ctx) => {
        requireAuth(ctx);
        return ctx.loaders.paymentsOfUser.load(user.userId);
      },
    },
  };
}
