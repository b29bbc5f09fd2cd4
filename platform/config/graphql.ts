/** The GraphQL settings every process reads the same way: the gateway and every subgraph apply one cost budget (CONTRACT §9). */
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from '../query-limits';
import type { EnvReader } from './env';

export interface GraphqlConfig {
  /**
   * The GraphQL limits. `GRAPHQL_MAX_COST` (default 10000) is the demand-control budget and
   * `GRAPHQL_DEFAULT_LIST_SIZE` (default 20) the length assumed for a list whose `@listSize` gives
   * none; depth, aliases and directives stay at their defaults.
   */
  queryLimits: QueryLimits;
}

export function readGraphql(env: EnvReader): GraphqlConfig {
  return {
    queryLimits: {
      ...DEFAULT_QUERY_LIMITS,
      maxCost: env.int('GRAPHQL_MAX_COST', DEFAULT_QUERY_LIMITS.maxCost, 1),
      defaultListSize: env.int('GRAPHQL_DEFAULT_LIST_SIZE', DEFAULT_QUERY_LIMITS.defaultListSize, 0),
    },
  };
}
