/**
 * The gateway's federated endpoint: @apollo/gateway over the committed schema/supergraph.graphql,
 * served by Apollo Server 5 at `/graphql`. It forwards the caller's Authorization and X-Request-Id
 * to the subgraphs (which authorize), applies the GraphQL limits (platform/query-limits.ts, the same ones
 * every subgraph installs), and never shows a stack trace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloGateway } from '@apollo/gateway';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { GraphQLError, OperationTypeNode, parse, type GraphQLFormattedError } from 'graphql';
import type { Registry } from 'prom-client';
import type { Config, ServiceName } from '../platform/config';
import type { EventBus } from '../platform/events/bus';
import { gatewayForwarding } from '../platform/forwarded';
import { CLIENT_EXTENSIONS, GRAPHQL_CODES, INTERNAL_ERROR_MESSAGE } from '../platform/graphql-errors';
import type { Logger } from '../platform/logger';
import { requestId } from '../rest-compat/app';
import { graphqlFront, MALFORMED_JSON } from './graphql-front';
import type { FrontHandler, GraphqlHalf } from './index';
import { createSubgraphFetcher } from './subgraph-fetcher';
import { requestSharing } from './shared-requests';
import { SubgraphSource, type GatewayContext } from './subgraph-source';
import { readManifest, trustedDocuments, type PersistedManifest, type TrustedDocuments } from './trusted-documents';
import { liveSubscriptions, type LiveSubscriptions, type LiveSubscriptionsDeps } from './subscriptions';
import { usageReporting } from './usage-reporting';
import { reportServedSchema, type SchemaReporter } from './schema-report';
import { costDirectivesOf } from '../platform/query-cost';
import { DEFAULT_QUERY_LIMITS, queryCostOfRefusal, queryLimitCode, queryLimits, type QueryLimits } from '../platform/query-limits';

export const SUPERGRAPH_PATH = path.join(__dirname, '..', 'schema', 'supergraph.graphql');
export const GRAPHQL_BODY_LIMIT = '1mb';

export interface GraphqlGatewayDeps {
  config: Pick<Config, 'urls' | 'apolloTelemetryDisabled'> &
    Partial<
      Pick<
        Config,
        'trustProxy' | 'gatewayDeduplicateQueries' | 'gatewayDeduplicateRequests' | 'queryLimits' | 'trustedDocuments' | 'usage' | 'internalApiKey' | 'jwt' | 'subscriptionLimits'
      >
    >;
  logger: Logger;
  /** The bus the subscriptions are fed from (gateway/subscriptions/); without it, no subscription is served. */
  bus?: EventBus;
  /** Defaults to the committed supergraph. */
  supergraphSdl?: string;
  /** Defaults to config.queryLimits, else the defaults. */
  limits?: QueryLimits;
  /** The trusted documents; defaults to the admin UI's generated manifest. */
  manifest?: PersistedManifest;
  /** The gateway's metrics registry, for the GraphQL half's own counters. */
  registry?: Registry;
}

export interface GraphqlGateway {
  mount(app: Express): Promise<void>;
  /**
   * Once mounted, answers on the server, before the Express app, the requests nearly every client
   * sends: `POST /graphql` with a JSON body of declared length within the limit. Their answer is the
   * one the app's route gives (the same Apollo Server, request id, context and malformed-JSON
   * answer); everything else (GET, other media types, compressed or chunked bodies, a query string)
   * goes to the app. A profile of the dashboard query had Express's router and body parser among the
   * gateway's top frames. The path is gateway/graphql-front.ts.
   */
  front: FrontHandler;
  /** Ends the open subscription streams, before the server drains its connections. */
  closeStreams(): void;
  stop(): Promise<void>;
}

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
  const code = queryLimitCode(error) ?? (uncodedClientError(error) ? GRAPHQL_CODES.BAD_REQUEST : source.code);
  const extensions: Record<string, unknown> = { code: code ?? GRAPHQL_CODES.INTERNAL_SERVER_ERROR };
  for (const key of CLIENT_EXTENSIONS) if (key !== 'code' && source[key] !== undefined) extensions[key] = source[key];
  const cost = queryCostOfRefusal(error);
  if (cost) extensions.cost = cost;
  const internal = extensions.code === GRAPHQL_CODES.INTERNAL_SERVER_ERROR;
  return { message: internal ? INTERNAL_ERROR_MESSAGE : formatted.message, locations: formatted.locations, path: formatted.path, extensions };
}

/** Logs, with the request id, the errors the client only sees as a generic internal error (a subgraph down, a bug). */
function internalErrorLog(logger: Logger): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ errors }) {
          for (const error of errors) {
            const code = error.extensions?.code;
            if ((code !== undefined && code !== GRAPHQL_CODES.INTERNAL_SERVER_ERROR) || uncodedClientError(error)) continue;
            if (error.message === INTERNAL_ERROR_MESSAGE) continue; // a subgraph's, already logged there
            logger.error({ message: error.message, path: error.path, serviceName: error.extensions?.serviceName }, 'graphql gateway error');
          }
        },
      };
    },
  };
}

/**
 * Requests that pass GraphQL validation but give the gateway nothing it can run, which Apollo
 * Server would answer with a 500: an operationName that names no operation of the document (even
 * ""), no name for a document of several, an operation type the supergraph lacks, and a
 * subscription not asked for as an event stream (gateway/subscriptions/ serves those). They are the
 * client's mistake: 400.
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
          } else if (operation.operation === OperationTypeNode.SUBSCRIPTION) {
            problem = 'A subscription is answered as an event stream: send it with Accept: text/event-stream (docs/subscriptions.md).';
          }
          if (problem) throw new GraphQLError(problem, { extensions: { code: GRAPHQL_CODES.BAD_REQUEST, http: { status: 400 } } });
        },
      };
    },
  };
}

/** The gateway's app gives every request its id first; mounted on another app, this does (the same rule). */
const withRequestId: RequestHandler = (req, res, next) => (req.requestId ? next() : requestId(req, res, next));

/**
 * Trusted documents on the app's route (the front path resolves its own): a POST body's id replaced
 * by its document, and a GET's document text held to the mode. A GET names no id: ids go by POST.
 */
function trustedDocumentsRoute(trusted: TrustedDocuments): RequestHandler {
  return (req, res, next) => {
    const resolved = req.method === 'GET' ? getText(req.originalUrl, trusted) : trusted.resolve(req.body);
    if ('refusal' in resolved) {
      res.status(resolved.refusal.status).json(resolved.refusal.body);
      return;
    }
    if (req.method !== 'GET') req.body = resolved.body;
    next();
  };
}

function getText(url: string, trusted: TrustedDocuments): ReturnType<TrustedDocuments['resolve']> {
  const text = new URL(url, 'http://gateway').searchParams.get('query');
  const refused = text === null ? undefined : trusted.admitsText(text);
  return refused ? { refusal: refused } : { body: undefined };
}

/** JSON body errors on /graphql answered as GraphQL errors rather than an HTML page. */
const bodyErrors: ErrorRequestHandler = (error: { type?: string }, _req, res, next) => {
  if (error.type === 'entity.parse.failed') {
    res.status(400).json(MALFORMED_JSON);
  } else if (error.type === 'entity.too.large') {
    res.status(413).json({ errors: [{ message: `Request body exceeds the ${GRAPHQL_BODY_LIMIT} limit`, extensions: { code: GRAPHQL_CODES.PAYLOAD_TOO_LARGE } }] });
  } else {
    next(error);
  }
};

export function createGraphqlGateway(deps: GraphqlGatewayDeps): GraphqlGateway {
  const { config } = deps;
  const logger = deps.logger.child({ component: 'graphql-gateway' });
  const limits = deps.limits ?? config.queryLimits ?? DEFAULT_QUERY_LIMITS;
  const supergraphSdl = deps.supergraphSdl ?? fs.readFileSync(SUPERGRAPH_PATH, 'utf8');
  // Demand control reads @cost and @listSize from the supergraph, where composition keeps them.
  const limitsOptions = queryLimits<GatewayContext>(limits, costDirectivesOf(parse(supergraphSdl)));
  const forwarding = config.trustProxy ? gatewayForwarding(config.trustProxy) : undefined;
  if (!config.apolloTelemetryDisabled) logger.info('Apollo usage telemetry is enabled (APOLLO_TELEMETRY_DISABLED=0)');
  let server: ApolloServer<GatewayContext> | undefined;
  const subgraphs = createSubgraphFetcher({ deduplicate: config.gatewayDeduplicateQueries ?? true });
  const trusted = trustedDocuments(deps.manifest ?? readManifest(), config.trustedDocuments ?? 'off', logger);
  if (config.trustedDocuments === 'enforce') logger.info('GraphQL runs trusted documents only (GRAPHQL_TRUSTED_DOCUMENTS=enforce)');
  const sharing = requestSharing({ enabled: config.gatewayDeduplicateRequests ?? true, maxTokens: limitsOptions.parseOptions.maxTokens, registry: deps.registry });
  const live = liveHalf(deps, { server: () => server, supergraphSdl, trusted, forwarding, limitsOptions });
  // Field usage and the served schema go to the registry (CONTRACT §13) when the config says where and with which key.
  const registryAccess = config.usage?.reporting && config.internalApiKey ? { ...config, usage: config.usage, internalApiKey: config.internalApiKey } : undefined;
  const usage = registryAccess ? usageReporting({ config: registryAccess, logger, registry: deps.registry }) : undefined;
  let schemaReport: SchemaReporter | undefined;
  const front = graphqlFront({ server: () => server, forwarding, trusted, sharing, usage, logger });

  return {
    front: live ? (req, res) => (server !== undefined && live.front(req, res)) || front(req, res) : front,
    closeStreams: () => live?.close(),
    async mount(app) {
      const gateway = new ApolloGateway({
        supergraphSdl,
        logger,
        buildService: ({ name, url }) => new SubgraphSource(() => (name in config.urls ? `${config.urls[name as ServiceName]}/graphql` : (url ?? '')), subgraphs.fetch),
      });
      server = new ApolloServer<GatewayContext>({
        gateway,
        plugins: [ApolloServerPluginLandingPageDisabled(), runnableOperation(), ...limitsOptions.plugins, internalErrorLog(logger), ...(usage ? [usage.plugin] : [])],
        validationRules: limitsOptions.validationRules,
        logger,
        introspection: true,
        csrfPrevention: true,
        includeStacktraceInErrorResponses: false,
        stopOnTerminationSignals: false,
        parseOptions: limitsOptions.parseOptions,
        formatError: formatGatewayError,
      });
      await server.start();
      if (registryAccess) schemaReport = reportServedSchema({ config: registryAccess, logger, supergraphSdl });
      app.use(
        '/graphql',
        withRequestId,
        express.json({ limit: GRAPHQL_BODY_LIMIT }),
        ...(live ? [live.middleware] : []),
        trustedDocumentsRoute(trusted),
        expressMiddleware(server, {
          context: async ({ req }) => ({ forwarded: forwarding?.headers(req) }),
        }),
        bodyErrors,
      );
      await live?.start();
    },
    async stop() {
      await live?.stop();
      schemaReport?.stop();
      await server?.stop();
      server = undefined;
      await usage?.stop();
      subgraphs.close();
    },
  };
}

/** The subscriptions, when the gateway has a bus and the configuration they need. */
function liveHalf(
  deps: GraphqlGatewayDeps,
  parts: Pick<LiveSubscriptionsDeps, 'server' | 'supergraphSdl' | 'trusted' | 'forwarding'> & { limitsOptions: ReturnType<typeof queryLimits<GatewayContext>> },
): LiveSubscriptions | undefined {
  const { config, bus } = deps;
  if (!bus || !config.internalApiKey || !config.jwt || !config.subscriptionLimits) return undefined;
  const { limitsOptions, ...rest } = parts;
  return liveSubscriptions({
    ...rest,
    config: { urls: config.urls, internalApiKey: config.internalApiKey, jwt: config.jwt, subscriptionLimits: config.subscriptionLimits },
    bus,
    logger: deps.logger,
    registry: deps.registry,
    validationRules: limitsOptions.validationRules,
    maxTokens: limitsOptions.parseOptions.maxTokens,
  });
}

/** The hook the starters hand to `createGateway` (`mountGraphql`): mounts /graphql, returns its stop and front handler. */
export const graphqlHalf: GraphqlHalf = (deps) => async (app, registry) => {
  const graphql = createGraphqlGateway({ ...deps, registry });
  await graphql.mount(app);
  return { stop: () => graphql.stop(), front: graphql.front, beforeClose: () => graphql.closeStreams() };
};
