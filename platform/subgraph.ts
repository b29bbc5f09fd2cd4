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
import {
  GraphQLError,
  GraphQLScalarType,
  Kind,
  parse,
  type DocumentNode,
  type GraphQLFieldResolver,
  type GraphQLFormattedError,
  type GraphQLResolveInfo,
  type GraphQLSchema,
} from 'graphql';
import { assertRole, bearerToken, type Principal, type TokenVerifier } from './auth';
import { AppError, unauthenticated, validationFailed } from './errors';
import { isUuid } from './validation';
import { databaseOutage } from './database';
import { CODE_OF_STATUS, GRAPHQL_CODES, INTERNAL_ERROR_MESSAGE } from './graphql-errors';
import { applySlicingRule } from './list-sizes';
import { costDirectivesOf } from './query-cost';
import { DEFAULT_QUERY_LIMITS, queryCostOfRefusal, queryLimitCode, queryLimits, type QueryLimits } from './query-limits';
import type { Logger } from './logger';
import { centsText, toCents } from './money';

export interface SubgraphContext<L = unknown> {
  /** The verified caller; null without a token or with an invalid one (resolvers decide if that is fine). */
  principal: Principal | null;
  /** Why there is no principal when a token was presented but could not be checked (auth service down). */
  authFailure: AppError | null;
  /** DataLoaders made for this request only, so nothing is cached across callers. */
  loaders: L;
}

/** A field resolver, or a `__resolveReference` (reference, context, info), of a subgraph whose context is `C`. */
type ResolverOf<C> =
  | ((parent: never, args: never, context: C, info: GraphQLResolveInfo) => unknown)
  | { resolve: (parent: never, args: never, context: C, info: GraphQLResolveInfo) => unknown }
  | ((reference: never, context: C, info: GraphQLResolveInfo) => unknown);

/**
 * The shape the generated types give a `Subscription` field's resolver. No subgraph implements one:
 * the gateway answers the subscriptions the SDL declares (gateway/subscriptions/).
 */
interface SubscriberOf<C> {
  subscribe: (parent: never, args: never, context: C, info: GraphQLResolveInfo) => unknown;
  resolve?: (parent: never, args: never, context: C, info: GraphQLResolveInfo) => unknown;
}

/**
 * A subgraph's resolvers, as its generated `Resolvers` type (subgraphs/<name>/generated/) has checked
 * them against its SDL; here only that they expect this subgraph's context, for buildSubgraphSchema.
 */
export type SubgraphResolvers<L> = Record<string, GraphQLScalarType | Record<string, ResolverOf<SubgraphContext<L>> | SubscriberOf<SubgraphContext<L>> | undefined> | undefined>;

/** What a field's resolver may return, read off its generated `Resolver` type. */
type FieldResult<R> = R extends (...args: never[]) => infer T ? Awaited<T> : never;

/**
 * Compiles only when `Dto`, the type a codegen mapper puts in place of an SDL type in a subgraph's
 * generated resolver types, can be returned for it: each field of the type's generated resolvers `R`
 * that no resolver in `Resolved` computes is read off the DTO, so the DTO has it, of a type that
 * field's resolver may return.
 */
export type MapperCovers<
  R,
  Dto extends { [K in Exclude<keyof R, Resolved | '__resolveReference' | '__isTypeOf'>]-?: FieldResult<NonNullable<R[K]>> },
  Resolved extends keyof R = never,
> = Dto;

export interface SubgraphOptions<L> {
  name: string;
  /** Path of the service's schema.graphql (`npm run build` copies it beside the compiled JS). */
  schemaFile: string;
  resolvers: SubgraphResolvers<L>;
  verifier: TokenVerifier;
  logger: Logger;
  /** Builds the request's DataLoaders; the principal is already known (or null). */
  loaders: (principal: Principal | null) => L;
  /** The GraphQL limits (config.queryLimits), the gateway's; the defaults when not given. */
  limits?: QueryLimits;
}

export interface SubgraphEndpoint {
  /** Mount at `/graphql` after the app's JSON body parser. */
  middleware: RequestHandler;
  stop(): Promise<void>;
}

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
  if (!clientSafe(original)) return { ...base, message: INTERNAL_ERROR_MESSAGE, extensions: { code: GRAPHQL_CODES.INTERNAL_SERVER_ERROR } };
  if (original instanceof AppError) {
    const extensions: Record<string, unknown> = { code: CODE_OF_STATUS[original.status], reason: original.code };
    if (original.validationErrors) extensions.validationErrors = original.validationErrors;
    return { ...base, message: original.message, extensions };
  }
  const cost = queryCostOfRefusal(error);
  return { ...base, extensions: { code: queryLimitCode(error) ?? formatted.extensions?.code ?? GRAPHQL_CODES.INTERNAL_SERVER_ERROR, ...(cost ? { cost } : {}) } };
}

/** Logs (with the request id, as every line) what the client only sees as a generic internal error. */
function unexpectedErrorLog(logger: Logger): ApolloServerPlugin<SubgraphContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ errors }) {
          for (const error of errors) {
            const original = unwrapResolverError(error);
            if (clientSafe(original)) continue;
            const fields = { err: original, path: error.path };
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
  validateEntityReferences(schema, entityKeys(typeDefs));
  // The gateway's limits here too, the cost from this subgraph's own @cost and @listSize: a query
  // sent to this service's own port cannot amplify (CONTRACT §9). Its resolvers read each slicing
  // argument as the estimate does, so no list is longer than it was costed.
  const directives = costDirectivesOf(typeDefs);
  applySlicingRule(schema, directives);
  const limits = queryLimits<SubgraphContext<L>>(options.limits ?? DEFAULT_QUERY_LIMITS, directives);
  // No usage reporting anywhere (telemetry is off), so no federated traces for the gateway either.
  const plugins: ApolloServerPlugin<SubgraphContext<L>>[] = [
    ApolloServerPluginLandingPageDisabled(),
    ApolloServerPluginInlineTraceDisabled(),
    ...limits.plugins,
    unexpectedErrorLog(logger),
  ];
  const server = new ApolloServer<SubgraphContext<L>>({
    schema,
    plugins,
    validationRules: limits.validationRules,
    parseOptions: limits.parseOptions,
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
      return { ...auth, loaders: options.loaders(auth.principal) };
    },
  });
  return { middleware, stop: () => server.stop() };
}

/** Each entity type of a subgraph's SDL with the fields of each of its `@key`s (every key here is one id). */
function entityKeys(typeDefs: DocumentNode): Map<string, string[][]> {
  const keys = new Map<string, string[][]>();
  for (const definition of typeDefs.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    for (const directive of definition.directives ?? []) {
      const fields = directive.name.value === 'key' ? directive.arguments?.find((arg) => arg.name.value === 'fields')?.value : undefined;
      if (fields?.kind !== Kind.STRING) continue;
      keys.set(definition.name.value, [...(keys.get(definition.name.value) ?? []), fields.value.trim().split(/\s+/)]);
    }
  }
  return keys;
}

/**
 * The representation as a reference resolvers can trust (its key fields lowercased UUIDs), or the
 * client error it is: like an id in a REST path, a key that is not a UUID is a 400 (BAD_USER_INPUT).
 */
function checkedReference(representation: unknown, index: number, keys: Map<string, string[][]>): Record<string, unknown> | AppError {
  const at = `representations[${index}]`;
  if (typeof representation !== 'object' || representation === null || Array.isArray(representation)) return validationFailed([`${at}: must be an object`]);
  const reference = representation as Record<string, unknown>;
  const typeKeys = typeof reference.__typename === 'string' ? keys.get(reference.__typename) : undefined;
  if (!typeKeys) return validationFailed([`${at}.__typename: must name an entity of this service`]);
  const key = typeKeys.find((fields) => fields.every((field) => isUuid(reference[field])));
  if (!key) return validationFailed(typeKeys[0].filter((field) => !isUuid(reference[field])).map((field) => `${at}.${field}: must be a UUID`));
  return { ...reference, ...Object.fromEntries(key.map((field) => [field, (reference[field] as string).toLowerCase()])) };
}

/**
 * Entity references are checked in one place for every entity of every subgraph: `_entities` hands
 * its resolver (and so each `__resolveReference`) only well-formed references; each malformed one
 * is a BAD_USER_INPUT error at its own index, not a crash of the batch.
 */
function validateEntityReferences(schema: GraphQLSchema, keys: Map<string, string[][]>): void {
  const field = schema.getQueryType()?.getFields()._entities;
  const resolve = field?.resolve as GraphQLFieldResolver<unknown, unknown, { representations: unknown[] }> | undefined;
  if (!field || !resolve) return;
  field.resolve = (source, args: { representations: unknown[] }, context, info) => {
    const checked = args.representations.map((representation, index) => checkedReference(representation, index, keys));
    const valid = checked.filter((entry): entry is Record<string, unknown> => !(entry instanceof AppError));
    if (valid.length === checked.length) return resolve(source, { representations: valid }, context, info);
    const resolved = (valid.length > 0 ? resolve(source, { representations: valid }, context, info) : []) as unknown[];
    let next = 0;
    return checked.map((entry) => (entry instanceof AppError ? entry : resolved[next++]));
  };
}

/** The caller, or UNAUTHENTICATED (or the auth service's outage when the token could not be checked). */
export function requireAuth(ctx: SubgraphContext): Principal {
  if (ctx.principal) return ctx.principal;
  throw ctx.authFailure ?? unauthenticated();
}

/** An ADMIN caller, or UNAUTHENTICATED / FORBIDDEN. */
export function requireAdmin(ctx: SubgraphContext): Principal {
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
export function batchLoader<V>(principal: Principal | null, batch: (principal: Principal, keys: readonly string[]) => Promise<(NoInfer<V> | Error)[]>): DataLoader<string, V> {
  return new DataLoader<string, V>(async (keys) => (principal ? batch(principal, keys.map(lower)) : keys.map(() => unauthenticated())), { cacheKeyFn: lower });
}

/** A per-request DataLoader over a public batch read (no caller needed), same contract as `batchLoader`. */
export function publicLoader<V>(batch: (keys: readonly string[]) => Promise<(V | Error | null)[]>): DataLoader<string, V | null> {
  return new DataLoader<string, V | null>((keys) => batch(keys.map(lower)), { cacheKeyFn: lower });
}

const MONEY_TEXT = /^-?\d+(\.\d{1,2})?$/;

function moneyInput(value: unknown): string {
  if (typeof value === 'string' && MONEY_TEXT.test(value.trim())) return centsText(toCents(value));
  throw new GraphQLError('Money must be a decimal string with at most two decimals, such as "59.98"', { extensions: { code: GRAPHQL_CODES.BAD_USER_INPUT } });
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
    if (ast.kind !== Kind.STRING) throw new GraphQLError('Money must be a string literal such as "59.98"', { nodes: ast, extensions: { code: GRAPHQL_CODES.BAD_USER_INPUT } });
    return moneyInput(ast.value);
  },
});
