/**
 * The gateway's federated endpoint: @apollo/gateway over the committed schema/supergraph.graphql,
 * served by Apollo Server 5 at `/graphql`. It forwards the caller's Authorization and X-Request-Id
 * to the subgraphs (which authorize), limits depth and cost, and never shows a stack trace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloGateway, RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { Config, ServiceName } from '../platform/config';
import type { Logger } from '../platform/logger';
import { requestId } from '../rest-compat/app';
import type { GraphqlHalf } from './index';
import { DEFAULT_QUERY_LIMITS, MAX_QUERY_TOKENS, limitViolation, measureOperation, type QueryLimits } from './query-limits';

export const SUPERGRAPH_PATH = path.join(__dirname, '..', 'schema', 'supergraph.graphql');
export const GRAPHQL_BODY_LIMIT = '1mb';
const INTERNAL_ERROR_MESSAGE = 'An unexpected error occurred';

export interface GatewayContext {
  authorization?: string;
  requestId: string;
}

export interface GraphqlGatewayDeps {
  config: Pick<Config, 'urls' | 'apolloTelemetryDisabled'>;
  logger: Logger;
  /** Defaults to the committed supergraph. */
  supergraphSdl?: string;
  limits?: QueryLimits;
}

export interface GraphqlGateway {
  mount(app: Express): Promise<void>;
  stop(): Promise<void>;
}

/** Sends each subgraph request to the service's current URL with the caller's credentials and request id. */
class ForwardingDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  constructor(private readonly subgraphUrl: () => string) {
    // Node's own fetch (undici, pooled keep-alive connections). The default, make-fetch-happen over
    // agent-base, built an Error stack per request to tell http from https: a profile of the
    // dashboard query showed it among the gateway's hottest frames.
    super({ url: subgraphUrl(), fetcher: fetch as unknown as NonNullable<ConstructorParameters<typeof RemoteGraphQLDataSource>[0]>['fetcher'] });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): void {
    if (!request.http) return;
    // Read per request: the supergraph's routing URLs are defaults; config.urls is the truth (port 0 in tests).
    request.http = { ...request.http, url: this.subgraphUrl() };
    // The gateway's own health checks and supergraph loads have an empty context.
    if (context.authorization) request.http.headers.set('authorization', context.authorization);
    if (context.requestId) request.http.headers.set('x-request-id', context.requestId);
  }
}

const SAFE_EXTENSIONS = ['code', 'reason', 'validationErrors'];

/**
 * A request error Apollo raises without a code but with a 4xx status (e.g. "provided sha does not
 * match query" for an automatic persisted query): the client's fault, so BAD_REQUEST, not internal.
 */
function uncodedClientError(error: unknown): boolean {
  if (!(error instanceof GraphQLError) || error.extensions.code !== undefined) return false;
  const status = (error.extensions.http as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/**
 * What reaches the client: message, locations, path and a whitelist of extensions. A subgraph's raw
 * HTTP error body (`extensions.response`) and any internal message are dropped.
 */
export function formatGatewayError(formatted: GraphQLFormattedError, error?: unknown): GraphQLFormattedError {
  const source = formatted.extensions ?? {};
  const code = uncodedClientError(error) ? 'BAD_REQUEST' : source.code;
  const extensions: Record<string, unknown> = { code: code ?? 'INTERNAL_SERVER_ERROR' };
  for (const key of SAFE_EXTENSIONS) if (key !== 'code' && source[key] !== undefined) extensions[key] = source[key];
  const internal = extensions.code === 'INTERNAL_SERVER_ERROR';
  return { message: internal ? INTERNAL_ERROR_MESSAGE : formatted.message, locations: formatted.locations, path: formatted.path, extensions };
}

/** Logs, with the request id, the errors the client only sees as a generic internal error (a subgraph down, a bug). */
function internalErrorLog(logger: Logger): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ contextValue, errors }) {
          for (const error of errors) {
            const code = error.extensions?.code;
            if ((code !== undefined && code !== 'INTERNAL_SERVER_ERROR') || uncodedClientError(error)) continue;
            if (error.message === INTERNAL_ERROR_MESSAGE) continue; // a subgraph's, already logged there
            logger.error({ message: error.message, path: error.path, serviceName: error.extensions?.serviceName, requestId: contextValue.requestId }, 'graphql gateway error');
          }
        },
      };
    },
  };
}

/**
 * Requests that pass GraphQL validation but give the gateway nothing it can run, which Apollo
 * Server would answer with a 500: an operationName that names no operation of the document (even
 * ""), no name for a document of several, and an operation type the supergraph lacks
 * (`subscription`, which graphql-js 16 does not validate). They are the client's mistake: 400.
 */
function runnableOperation(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, request, schema }) {
          let problem: string | undefined;
          if (!operation) {
            const name = request.operationName;
            problem = typeof name === 'string' ? `Unknown operation named "${name}".` : 'Must provide an operation, and its name if the document contains several.';
          } else if (!schema.getRootType(operation.operation)) {
            problem = `The schema has no ${operation.operation} operations.`;
          }
          if (problem) throw new GraphQLError(problem, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
        },
      };
    },
  };
}

function limitsPlugin(limits: QueryLimits): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operationName, request, schema }) {
          const measure = measureOperation(document, { schema, operationName, variables: request.variables ?? {}, limits });
          const violation = limitViolation(measure, limits);
          if (violation) throw violation;
        },
      };
    },
  };
}

/** The gateway's app gives every request its id first; mounted on another app, this does (the same rule). */
const withRequestId: RequestHandler = (req, res, next) => (req.requestId ? next() : requestId(req, res, next));

/** JSON body errors on /graphql answered as GraphQL errors rather than an HTML page. */
const bodyErrors: ErrorRequestHandler = (error: { type?: string }, _req, res, next) => {
  if (error.type === 'entity.parse.failed') {
    res.status(400).json({ errors: [{ message: 'Malformed JSON request body', extensions: { code: 'BAD_REQUEST' } }] });
  } else if (error.type === 'entity.too.large') {
    res.status(413).json({ errors: [{ message: `Request body exceeds the ${GRAPHQL_BODY_LIMIT} limit`, extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
  } else {
    next(error);
  }
};

export function createGraphqlGateway(deps: GraphqlGatewayDeps): GraphqlGateway {
  const { config } = deps;
  const logger = deps.logger.child({ component: 'graphql-gateway' });
  const limits = deps.limits ?? DEFAULT_QUERY_LIMITS;
  if (!config.apolloTelemetryDisabled) logger.info('Apollo usage telemetry is enabled (APOLLO_TELEMETRY_DISABLED=0)');
  let server: ApolloServer<GatewayContext> | undefined;

  return {
    async mount(app) {
      const gateway = new ApolloGateway({
        supergraphSdl: deps.supergraphSdl ?? fs.readFileSync(SUPERGRAPH_PATH, 'utf8'),
        logger,
        buildService: ({ name, url }) =>
          new ForwardingDataSource(() => (name in config.urls ? `${config.urls[name as ServiceName]}/graphql` : (url ?? ''))),
      });
      server = new ApolloServer<GatewayContext>({
        gateway,
        plugins: [ApolloServerPluginLandingPageDisabled(), runnableOperation(), limitsPlugin(limits), internalErrorLog(logger)],
        logger,
        introspection: true,
        csrfPrevention: true,
        includeStacktraceInErrorResponses: false,
        stopOnTerminationSignals: false,
        parseOptions: { maxTokens: MAX_QUERY_TOKENS },
        formatError: formatGatewayError,
      });
      await server.start();
      app.use(
        '/graphql',
        withRequestId,
        express.json({ limit: GRAPHQL_BODY_LIMIT }),
        expressMiddleware(server, {
          context: async ({ req }) => ({ authorization: req.headers.authorization, requestId: req.requestId }),
        }),
        bodyErrors,
      );
    },
    async stop() {
      await server?.stop();
      server = undefined;
    },
  };
}

/** The hook the starters hand to `createGateway` (`mountGraphql`): mounts /graphql, returns its stop. */
export const graphqlHalf: GraphqlHalf = (deps) => async (app) => {
  const graphql = createGraphqlGateway(deps);
  await graphql.mount(app);
  return () => graphql.stop();
};
