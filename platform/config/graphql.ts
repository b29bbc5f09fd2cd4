/**
 * The GraphQL settings every process reads the same way: the gateway and every subgraph apply one
 * cost budget (CONTRACT §9), and the gateway alone decides which documents it runs.
 */
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from '../query-limits';
import { ConfigError, type EnvReader } from './env';

export const TRUSTED_DOCUMENT_MODES = ['off', 'allow', 'enforce'] as const;
export type TrustedDocumentMode = (typeof TRUSTED_DOCUMENT_MODES)[number];

export interface GraphqlConfig {
  /**
   * The GraphQL limits. `GRAPHQL_MAX_COST` (default 10000) is the demand-control budget and
   * `GRAPHQL_DEFAULT_LIST_SIZE` (default 20) the length assumed for a list whose `@listSize` gives
   * none; depth, aliases and directives stay at their defaults.
   */
  queryLimits: QueryLimits;
  /**
   * `GRAPHQL_TRUSTED_DOCUMENTS` (CONTRACT §11): `off` runs any document and ignores ids; `allow`
   * runs a document by its id from the manifest and any other document too, logging it; `enforce`
   * runs only documents of the manifest (by id or by their exact text). Default `off`; docker-compose
   * sets `enforce`.
   */
  trustedDocuments: TrustedDocumentMode;
}

export function readGraphql(env: EnvReader): GraphqlConfig {
  const mode = env.read('GRAPHQL_TRUSTED_DOCUMENTS') ?? 'off';
  if (!(TRUSTED_DOCUMENT_MODES as readonly string[]).includes(mode)) throw new ConfigError(`GRAPHQL_TRUSTED_DOCUMENTS must be off, allow or enforce, got "${mode}"`);
  return {
    queryLimits: {
      ...DEFAULT_QUERY_LIMITS,
      maxCost: env.int('GRAPHQL_MAX_COST', DEFAULT_QUERY_LIMITS.maxCost, 1),
      defaultListSize: env.int('GRAPHQL_DEFAULT_LIST_SIZE', DEFAULT_QUERY_LIMITS.defaultListSize, 0),
    },
    trustedDocuments: mode as TrustedDocumentMode,
  };
}
