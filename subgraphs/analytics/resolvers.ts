/** GraphQL resolvers of the analytics subgraph, as thin as routes.ts: every figure is ADMIN only, and so is the schema registry (registry/resolvers.ts). */
import type DataLoader from 'dataloader';
import { MoneyScalar, batchLoader, requireAuth, type MapperCovers, type SubgraphContext } from '../../platform/subgraph';
import type { Principal } from '../../platform/auth';
import { parseOptionalDate } from '../../platform/validation';
import type { QueryOrderReportArgs, QueryRevenueReportArgs, Resolvers, TopBookResolvers } from './generated/resolvers-types';
import { registryResolvers } from './registry/resolvers';
import type { RegistryService } from './registry/service';
import { resolveRange, type AnalyticsService, type TopBookItem } from './service';

export interface AnalyticsLoaders {
  sales: DataLoader<string, TopBookItem | null>;
}

type Ctx = SubgraphContext<AnalyticsLoaders>;
type RangeArgs = QueryRevenueReportArgs | QueryOrderReportArgs;

/** The DTO the generated types put in place of the SDL's TopBook (schema/codegen.ts) has every field but `book`. */
export type AnalyticsMappers = [MapperCovers<TopBookResolvers, TopBookItem, 'book'>];

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

export function analyticsResolvers(service: AnalyticsService, registry: RegistryService): Resolvers<Ctx> {
  const schema = registryResolvers(registry);
  return {
    Money: MoneyScalar,
    SchemaUsageReport: schema.SchemaUsageReport,
    Query: {
      ...schema.Query,
      dashboard: (_, __, ctx) => service.dashboard(requireAuth(ctx)),
      revenueReport: (_, args, ctx) => service.revenue(requireAuth(ctx), range(args)),
      orderReport: (_, args, ctx) => service.orders(requireAuth(ctx), range(args)),
      bookReport: (_, __, ctx) => service.books(requireAuth(ctx)),
      paymentReport: (_, __, ctx) => service.payments(requireAuth(ctx)),
    },
    TopBook: {
      book: (top) => ({ __typename: 'Book', id: top.bookId }),
    },
    Book: {
      __resolveReference: (reference) => ({ id: reference.id }),
      sales: async (book, _, ctx) => {
        const sold = await ctx.loaders.sales.load(book.id);
        return { quantitySold: sold?.quantitySold ?? 0, revenue: sold?.revenue ?? 0 };
      },
    },
  };
}
