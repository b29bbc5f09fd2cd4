/**
 * How the gateway calls a subgraph: one JSON POST to the service's current URL, carrying the
 * caller's headers, in place of @apollo/gateway's RemoteGraphQLDataSource.
 */
import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Fetcher, FetcherResponse } from '@apollo/utils.fetcher';
import { GraphQLError } from 'graphql';
import { GRAPHQL_CODES } from '../platform/graphql-errors';
import { outgoingHeaders } from '../platform/request-context';

export interface GatewayContext {
  /** Who the client is, for the subgraphs (platform/forwarded.ts). */
  forwarded?: Record<string, string>;
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
export class SubgraphSource implements GraphQLDataSource<GatewayContext> {
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
