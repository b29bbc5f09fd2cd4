/** GraphQL resolvers of the analytics subgraph, as thin as routes.ts: every figure is ADMIN only. */
import type DataLoader from 'dataloader';
import { MoneyScalar, batchLoader, requireAuth, type SubgraphContext, type SubgraphResolvers } from '../../platform/subgraph';
import type { Principal } from '../../platform/auth';
import { parseOptionalDate } from '../../platform/validation';
import { resolveRange, type AnalyticsService, type TopBookItem } from './service';

export interface AnalyticsLoaders {
  sales: DataLoader<string, TopBookItem | null>;
}

type Ctx = SubgraphContext<AnalyticsLoaders>;
type RangeArgs = { from?: string | null; to?: string | null };

/** The same 400 rules as the REST query string. */
const range = (args: RangeArgs) => resolveRange(parseOptionalDate(args.from ?? undefined, 'from'), parseOptionalDate(args.to ?? undefined, 'to'));

export function analyticsLoaders(service: AnalyticsService): (principal: Principal | null) => AnalyticsLoaders {
  return (principal) => ({
    sales: batchLoader(principal, async (caller, ids) => {
      const sales = await service.salesOf(caller, ids);
      return ids.map((id) => sales.get(id) ?? null);
    }),
  });
}

export function analyticsResolvers(service: AnalyticsService): SubgraphResolvers<AnalyticsLoaders> {
  return {
    Money: MoneyScalar,
    Query: {
      dashboard: (_: unknown, __: unknown, ctx: Ctx) => service.dashboard(requireAuth(ctx)),
      revenueReport: (_: unknown, args: RangeArgs, ctx: Ctx) => service.revenue(requireAuth(ctx), range(args)),
      orderReport: (_: unknown, args: RangeArgs, ctx: Ctx) => service.orders(requireAuth(ctx), range(args)),
      bookReport: (_: unknown, __: unknown, ctx: Ctx) => service.books(requireAuth(ctx)),
      paymentReport: (_: unknown, __: unknown, ctx: Ctx) => service.payments(requireAuth(ctx)),
    },
    TopBook: {
      book: (top: TopBookItem) => ({ __typename: 'Book', id: top.bookId }),
    },
    Book: {
      __resolveReference: (reference: { id: string }) => ({ id: reference.id }),
      sales: async (book: { id: string }, _: unknown, ctx: Ctx) => {
        const sold = await ctx.loaders.sales.load(book.id);
        return { quantitySold: sold?.quantitySold ?? 0, revenue: sold?.revenue ?? 0 };
      },
    },
  };
}
