/**
 * The gateway's federated endpoint: @apollo/gateway over the committed schema/supergraph.graphql,
 * served by Apollo Server 5 at `/graphql`. It forwards the caller's Authorization and X-Request-Id
 * to the subgraphs (which authorize), applies the GraphQL limits (platform/query-limits.ts, the same ones
 * every subgraph installs), and never shows a stack trace.
 */
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { ApolloServer, HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloGateway, type GraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Fetcher, FetcherResponse } from '@apollo/utils.fetcher';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { Config, ServiceName } from '../platform/config';
import { gatewayForwarding } from '../platform/forwarded';
import { CLIENT_EXTENSIONS, GRAPHQL_CODES, INTERNAL_ERROR_MESSAGE } from '../platform/graphql-errors';
import { sendJson } from '../platform/http';
import type { Logger } from '../platform/logger';
import { outgoingHeaders, runInContext } from '../platform/request-context';
import { answeredBeforeTheApp, requestId } from '../rest-compat/app';
import type { FrontHandler, GraphqlHalf } from './index';
import { createSubgraphFetcher } from './subgraph-fetcher';
import { DEFAULT_QUERY_LIMITS, queryLimitCode, queryLimits, type QueryLimits } from '../platform/query-limits';

export const SUPERGRAPH_PATH = path.join(__dirname, '..', 'schema', 'supergraph.graphql');
export const GRAPHQL_BODY_LIMIT = '1mb';

export interface GatewayContext {
  /** Who the client is, for the subgraphs (platform/forwarded.ts). */
  forwarded?: Record<string, string>;
}

export interface GraphqlGatewayDeps {
  config: Pick<Config, 'urls' | 'apolloTelemetryDisabled'> & Partial<Pick<Config, 'trustProxy' | 'gatewayDeduplicateQueries'>>;
  logger: Logger;
  /** Defaults to the committed supergraph. */
  supergraphSdl?: string;
  limits?: QueryLimits;
}

export interface GraphqlGateway {
  mount(app: Express): Promise<void>;
  /**
   * Once mounted, answers on the server, before the Express app, the requests nearly every client
   * sends: `POST /graphql` with a JSON body of declared length within the limit. Their answer is the
   * one the app's route gives (the same Apollo Server, request id, context and malformed-JSON
   * answer); everything else (GET, other media types, compressed or chunked bodies, a query string)
   * goes to the app. A profile of the dashboard query had Express's router and body parser among the
   * gateway's top frames.
   */
  front: FrontHandler;
  stop(): Promise<void>;
}

/** A cache hint as Apollo Server's cache policy takes it (`restrict`). */
interface CacheHint {
  maxAge?: number;
  scope?: 'PUBLIC' | 'PRIVATE';
}

/** The cache hint a subgraph's `Cache-Control` gives, as @apollo/gateway's own data source reads it. */
function cacheHint(header: string | null): CacheHint {
  const directives = new Map<string, string | true>();
  for (const part of (header ?? '').trim().split(/\s*,\s*/)) {
    if (part === '') continue;
    const [name, value] = part.split(/\s*=\s*/, 2);
    directives.set(name.toLowerCase(), value === undefined ? true : value.replace(/^"|"$/g, ''));
  }
  const maxAge = directives.get('max-age');
  const hint: CacheHint = { maxAge: typeof maxAge === 'string' && /^[0-9]+$/.test(maxAge) ? Number(maxAge) : 0 };
  if (directives.get('private') === true) hint.scope = 'PRIVATE';
  if (directives.get('public') === true) hint.scope = 'PUBLIC';
  return hint;
}

/** An answer's body as @apollo/gateway reads it: JSON when it says so, else its text. */
async function answerBody(answer: FetcherResponse): Promise<unknown> {
  const type = answer.headers.get('content-type');
  return type?.startsWith('application/json') || type?.startsWith('application/graphql-response+json') ? answer.json() : answer.text();
}

/**
 * Sends each subgraph request to the service's current URL (the supergraph's routing URLs are
 * defaults; config.urls is the truth, port 0 in tests) with the caller's Authorization, request id
 * and forwarded client headers, through the gateway's fetcher (gateway/subgraph-fetcher.ts).
 *
 * It does what @apollo/gateway's RemoteGraphQLDataSource does for this gateway: one JSON POST with
 * the query first; an answer other than 2xx is an error carrying its status (401 UNAUTHENTICATED,
 * 403 FORBIDDEN; formatGatewayError drops the raw answer it holds); a body that is not a JSON object
 * is an error; the subgraph's `Cache-Control` narrows the answer's cache policy. It skips the
 * node-fetch `Headers` and `Request` that data source builds for every call, which under load took
 * 12-18 % of the gateway's profile samples.
 */
class SubgraphSource implements GraphQLDataSource<GatewayContext> {
  constructor(
    private readonly subgraphUrl: () => string,
    private readonly fetcher: Fetcher,
  ) {}

  async process(options: GraphQLDataSourceProcessOptions<GatewayContext>): ReturnType<GraphQLDataSource['process']> {
    const { query, http: given, ...rest } = options.request;
    if (!query) throw new Error('Missing query');
    const headers: Record<string, string> = {};
    if (given?.headers) for (const [name, value] of given.headers) headers[name.toLowerCase()] = value;
    headers['content-type'] = 'application/json';
    // From the request context; the gateway's own health checks run outside any request.
    Object.assign(headers, outgoingHeaders(true), (options.context as Partial<GatewayContext>).forwarded);
    const url = this.subgraphUrl();
    const answer = await this.fetcher(url, { method: 'POST', headers, body: JSON.stringify({ query, ...rest }) });
    const body = await answerBody(answer);
    if (!answer.ok) {
      const code = answer.status === 401 ? GRAPHQL_CODES.UNAUTHENTICATED : answer.status === 403 ? GRAPHQL_CODES.FORBIDDEN : undefined;
      throw new GraphQLError(`${answer.status}: ${answer.statusText}`, {
        extensions: { ...(code ? { code } : {}), response: { url, status: answer.status, statusText: answer.statusText, body } },
      });
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error(`Expected JSON response body, but received: ${String(body)}`);
    // A client's operation (not the gateway's own health check).
    if ('incomingRequestContext' in options) {
      // Typed `any` by the gateway interface; Apollo Server's cache policy when its cache-control plugin runs.
      const policy = options.incomingRequestContext.overallCachePolicy as { restrict?: (hint: CacheHint) => void } | undefined;
      policy?.restrict?.(cacheHint(answer.headers.get('cache-control')));
    }
    return { ...body, http: answer };
  }
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
          if (problem) throw new GraphQLError(problem, { extensions: { code: GRAPHQL_CODES.BAD_REQUEST, http: { status: 400 } } });
        },
      };
    },
  };
}

/** The gateway's app gives every request its id first; mounted on another app, this does (the same rule). */
const withRequestId: RequestHandler = (req, res, next) => (req.requestId ? next() : requestId(req, res, next));

const MALFORMED_JSON = { errors: [{ message: 'Malformed JSON request body', extensions: { code: GRAPHQL_CODES.BAD_REQUEST } }] };

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

/** `express.json({ limit: GRAPHQL_BODY_LIMIT })`'s limit in bytes. */
const GRAPHQL_BODY_LIMIT_BYTES = 1024 * 1024;
/** The media types `express.json()` reads as they are; any other goes through the app. */
const PLAIN_JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

/** A request the front path can take: see GraphqlGateway.front. */
function plainJsonPost(req: http.IncomingMessage): boolean {
  if (req.method !== 'POST' || req.url !== '/graphql') return false;
  const type = req.headers['content-type'];
  const encoding = req.headers['content-encoding'];
  const length = req.headers['content-length'];
  return (
    type !== undefined &&
    PLAIN_JSON_TYPES.has(type.toLowerCase()) &&
    (encoding === undefined || encoding.toLowerCase() === 'identity') &&
    req.headers['transfer-encoding'] === undefined &&
    length !== undefined &&
    Number(length) <= GRAPHQL_BODY_LIMIT_BYTES
  );
}

/**
 * A JSON body as `express.json()` reads it: empty is `{}`, a byte-order mark is dropped, and only an
 * object or an array at the top (its strict mode); anything else is undefined, for the 400.
 */
function parseJsonBody(bytes: Buffer): unknown {
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  if (text === '') return {};
  if (!/^[\x20\x09\x0a\x0d]*[{[]/.test(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function createGraphqlGateway(deps: GraphqlGatewayDeps): GraphqlGateway {
  const { config } = deps;
  const logger = deps.logger.child({ component: 'graphql-gateway' });
  const limits = deps.limits ?? DEFAULT_QUERY_LIMITS;
  const limitsOptions = queryLimits<GatewayContext>(limits);
  const forwarding = config.trustProxy ? gatewayForwarding(config.trustProxy) : undefined;
  if (!config.apolloTelemetryDisabled) logger.info('Apollo usage telemetry is enabled (APOLLO_TELEMETRY_DISABLED=0)');
  let server: ApolloServer<GatewayContext> | undefined;
  const subgraphs = createSubgraphFetcher({ deduplicate: config.gatewayDeduplicateQueries ?? true });

  /** The Apollo Server's answer to one JSON post, as expressMiddleware would send it. */
  const answer = async (req: http.IncomingMessage, res: http.ServerResponse, running: ApolloServer<GatewayContext>, bytes: Buffer): Promise<void> => {
    const body = parseJsonBody(bytes);
    if (body === undefined) {
      sendJson(res, 400, MALFORMED_JSON);
      return;
    }
    const headers = new HeaderMap();
    for (const name in req.headers) {
      const value = req.headers[name];
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const response = await running.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: 'POST', headers, search: '', body },
      context: async () => ({ forwarded: forwarding?.headers(req) }),
    });
    for (const [name, value] of response.headers) res.setHeader(name, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') {
      res.setHeader('Content-Length', Buffer.byteLength(response.body.string));
      res.end(response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  };

  const front: FrontHandler = (req, res) => {
    const running = server;
    if (!running || !plainJsonPost(req)) return false;
    const id = answeredBeforeTheApp(req, res);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('error', () => res.destroy());
    req.once('end', () => {
      runInContext({ requestId: id, authorization: req.headers.authorization }, () => {
        answer(req, res, running, Buffer.concat(chunks)).catch((error: unknown) => {
          logger.error({ err: error, requestId: id }, 'graphql gateway error');
          if (res.headersSent) res.destroy();
          else sendJson(res, 500, { errors: [{ message: INTERNAL_ERROR_MESSAGE, extensions: { code: GRAPHQL_CODES.INTERNAL_SERVER_ERROR } }] });
        });
      });
    });
    return true;
  };

  return {
    front,
    async mount(app) {
      const gateway = new ApolloGateway({
        supergraphSdl: deps.supergraphSdl ?? fs.readFileSync(SUPERGRAPH_PATH, 'utf8'),
        logger,
        buildService: ({ name, url }) => new SubgraphSource(() => (name in config.urls ? `${config.urls[name as ServiceName]}/graphql` : (url ?? '')), subgraphs.fetch),
      });
      server = new ApolloServer<GatewayContext>({
        gateway,
        plugins: [ApolloServerPluginLandingPageDisabled(), runnableOperation(), ...limitsOptions.plugins, internalErrorLog(logger)],
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
      app.use(
        '/graphql',
        withRequestId,
        express.json({ limit: GRAPHQL_BODY_LIMIT }),
        expressMiddleware(server, {
          context: async ({ req }) => ({ forwarded: forwarding?.headers(req) }),
        }),
        bodyErrors,
      );
    },
    async stop() {
      await server?.stop();
      server = undefined;
      subgraphs.close();
    },
  };
}

/** The hook the starters hand to `createGateway` (`mountGraphql`): mounts /graphql, returns its stop and front handler. */
export const graphqlHalf: GraphqlHalf = (deps) => async (app) => {
  const graphql = createGraphqlGateway(deps);
  await graphql.mount(app);
  return { stop: () => graphql.stop(), front: graphql.front };
};
