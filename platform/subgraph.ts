/**
 * The federated subgraph every service serves at `/graphql` on its own app: Apollo Server 5 over the
 * service's schema.graphql, a per-request context (the caller and DataLoaders), AppError mapped to
 * `extensions.code`, the auth helpers resolvers use, and the `Money` scalar every subgraph declares.
 */
import { readFileSync } from 'node:fs';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { ApolloServerPluginInlineTraceDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import DataLoader from 'dataloader';
import type { RequestHandler } from 'express';
import { GraphQLError, GraphQLScalarType, Kind, parse, type GraphQLFormattedError } from 'graphql';
import { assertRole, bearerToken, type Principal, type TokenVerifier } from '../rest-compat/auth';
import { databaseOutage } from '../rest-compat/app';
import { AppError, unauthenticated } from '../rest-compat/errors';
import type { Logger } from './logger';
import { centsText, toCents } from './money';

export interface SubgraphContext<L = unknown> {
  /** The verified caller; null without a token or with an invalid one (resolvers decide if that is fine). */
  principal: Principal | null;
  /** Why there is no principal when a token was presented but could not be checked (auth service down). */
  authFailure: AppError | null;
  /** DataLoaders made for this request only, so nothing is cached across callers. */
  loaders: L;
  requestId: string | undefined;
}

export type SubgraphResolvers<L> = GraphQLResolverMap<SubgraphContext<L>>;

export interface SubgraphOptions<L> {
  name: string;
  /** Path of the service's schema.graphql (`npm run build` copies it beside the compiled JS). */
  schemaFile: string;
  resolvers: SubgraphResolvers<L>;
  verifier: TokenVerifier;
  logger: Logger;
  /** Builds the request's DataLoaders; the principal is already known (or null). */
  loaders: (principal: Principal | null) => L;
}

export interface SubgraphEndpoint {
  /** Mount at `/graphql` after the app's JSON body parser. */
  middleware: RequestHandler;
  stop(): Promise<void>;
}

/** HTTP status of an AppError → the GraphQL error code clients switch on. */
const CODE_OF_STATUS: Record<number, string> = {
  400: 'BAD_USER_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  503: 'SERVICE_UNAVAILABLE',
};

export const INTERNAL_ERROR_MESSAGE = 'An unexpected error occurred';

/** An error the client may read as it is: an AppError of a mapped status, or a GraphQL error (parse, validation, variables). */
function clientSafe(original: unknown): boolean {
  return original instanceof AppError ? CODE_OF_STATUS[original.status] !== undefined : original instanceof GraphQLError;
}

/**
 * Shapes every error a subgraph answers: an AppError keeps its message and gets the code of its
 * status (its own stable code as `reason`); anything else unknown becomes a generic internal error.
 */
export function formatSubgraphError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const unwrapped = unwrapResolverError(error);
  // The database down is a passing outage, as over REST (503): the client may retry.
  const original = databaseOutage(unwrapped) ?? unwrapped;
  const base = { message: formatted.message, locations: formatted.locations, path: formatted.path };
  if (!clientSafe(original)) return { ...base, message: INTERNAL_ERROR_MESSAGE, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  if (original instanceof AppError) {
    const extensions: Record<string, unknown> = { code: CODE_OF_STATUS[original.status], reason: original.code };
    if (original.validationErrors) extensions.validationErrors = original.validationErrors;
    return { ...base, message: original.message, extensions };
  }
  return { ...base, extensions: { code: formatted.extensions?.code ?? 'INTERNAL_SERVER_ERROR' } };
}

/** Logs, with the request id, what the client only sees as a generic internal error. */
function unexpectedErrorLog(logger: Logger): ApolloServerPlugin<SubgraphContext<unknown>> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ contextValue, errors }) {
          for (const error of errors) {
            const original = unwrapResolverError(error);
            if (clientSafe(original)) continue;
            const fields = { err: original, path: error.path, requestId: contextValue.requestId };
            if (original instanceof AppError) logger.warn({ ...fields, code: original.code, status: original.status }, original.message);
            else logger.error(fields, 'unexpected error in a resolver');
          }
        },
      };
    },
  };
}

/** Verifies the bearer token, never throwing: a bad token is simply no principal. */
async function principalFrom(header: string | undefined, verifier: TokenVerifier): Promise<Pick<SubgraphContext, 'principal' | 'authFailure'>> {
  const token = bearerToken(header);
  if (!token) return { principal: null, authFailure: null };
  try {
    return { principal: await verifier.verify(token), authFailure: null };
  } catch (error) {
    const failure = error instanceof AppError && error.status !== 401 ? error : null;
    return { principal: null, authFailure: failure };
  }
}

/** Builds and starts the subgraph's Apollo Server; the caller mounts `middleware` and stops it with the service. */
export async function createSubgraphEndpoint<L>(options: SubgraphOptions<L>): Promise<SubgraphEndpoint> {
  const logger = options.logger.child({ graphql: options.name });
  const typeDefs = parse(readFileSync(options.schemaFile, 'utf8'));
  const schema = buildSubgraphSchema([{ typeDefs, resolvers: options.resolvers as GraphQLResolverMap<unknown> }]);
  // No usage reporting anywhere (telemetry is off), so no federated traces for the gateway either.
  const plugins: ApolloServerPlugin<SubgraphContext<L>>[] = [
    ApolloServerPluginLandingPageDisabled(),
    ApolloServerPluginInlineTraceDisabled(),
    unexpectedErrorLog(logger) as ApolloServerPlugin<SubgraphContext<L>>,
  ];
  const server = new ApolloServer<SubgraphContext<L>>({
    schema,
    plugins,
    logger,
    introspection: true,
    csrfPrevention: true,
    includeStacktraceInErrorResponses: false,
    // The service's runtime drains HTTP and stops this server; signals are main.ts's business.
    stopOnTerminationSignals: false,
    formatError: formatSubgraphError,
  });
  await server.start();
  const middleware = expressMiddleware(server, {
    context: async ({ req }) => {
      const auth = await principalFrom(req.headers.authorization, options.verifier);
      return { ...auth, loaders: options.loaders(auth.principal), requestId: req.requestId };
    },
  });
  return { middleware, stop: () => server.stop() };
}

/** The caller, or UNAUTHENTICATED (or the auth service's outage when the token could not be checked). */
export function requireAuth(ctx: SubgraphContext<unknown>): Principal {
  if (ctx.principal) return ctx.principal;
  throw ctx.authFailure ?? unauthenticated();
}

/** An ADMIN caller, or UNAUTHENTICATED / FORBIDDEN. */
export function requireAdmin(ctx: SubgraphContext<unknown>): Principal {
  const principal = requireAuth(ctx);
  assertRole(principal, 'ADMIN');
  return principal;
}

const lower = (key: string) => key.toLowerCase();

/**
 * A per-request DataLoader over a service batch read that applies the caller's access rule: one
 * call (one query) for every key asked in the same tick. `batch` answers in key order, an Error for
 * a key the caller may not see or that does not exist. Keys are lowercased UUIDs.
 */
export function batchLoader<V>(
  principal: Principal | null,
  batch: (principal: Principal, keys: readonly string[]) => Promise<(NoInfer<V> | Error)[]>,
): DataLoader<string, V> {
  return new DataLoader<string, V>(
    async (keys) => (principal ? batch(principal, keys.map(lower)) : keys.map(() => unauthenticated())),
    { cacheKeyFn: lower },
  );
}

/** A per-request DataLoader over a public batch read (no caller needed), same contract as `batchLoader`. */
export function publicLoader<V>(batch: (keys: readonly string[]) => Promise<(V | Error | null)[]>): DataLoader<string, V | null> {
  return new DataLoader<string, V | null>((keys) => batch(keys.map(lower)), { cacheKeyFn: lower });
}

const MONEY_TEXT = /^-?\d+(\.\d{1,2})?$/;

function moneyInput(value: unknown): string {
  if (typeof value === 'string' && MONEY_TEXT.test(value.trim())) return centsText(toCents(value));
  throw new GraphQLError('Money must be a decimal string with at most two decimals, such as "59.98"', { extensions: { code: 'BAD_USER_INPUT' } });
}

/**
 * Money in every subgraph: a decimal string with exactly two decimals ("59.98"). Exact (no binary
 * floating point on the way), the same digits REST shows, and what a DECIMAL column holds.
 */
export const MoneyScalar = new GraphQLScalarType({
  name: 'Money',
  description: 'An amount in the store currency as a decimal string with two decimals, e.g. "59.98".',
  serialize: (value) => {
    if (typeof value === 'number' || typeof value === 'string') return centsText(toCents(value));
    throw new GraphQLError('Money cannot represent a non-numeric value');
  },
  parseValue: moneyInput,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('Money must be a string literal such as "59.98"', { nodes: ast, extensions: { code: 'BAD_USER_INPUT' } });
    return moneyInput(ast.value);
  },
});
