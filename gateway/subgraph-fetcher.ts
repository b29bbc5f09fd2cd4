/**
 * How the gateway's GraphQL half reaches the subgraphs: a `fetch`-shaped function over node:http
 * with kept-alive connections, doing only what a subgraph call needs (one POST with a JSON body,
 * the whole answer read into one string). Node's own fetch wraps every call in web streams and
 * transferable objects; under load a profile of the gateway showed that machinery among its hottest
 * frames, for answers that are a few hundred bytes of JSON.
 *
 * A call that gets no answer head within the deadline, or stalls mid-answer, fails like a refused
 * connection does; @apollo/gateway then reports the field as an internal error.
 *
 * Identical queries in flight share one call (`GATEWAY_DEDUPLICATE_QUERIES`, on by default, as in
 * Hive Gateway and, opt-in, the Apollo Router): a subgraph request whose URL, headers and body equal
 * those of a query still waiting for its answer waits for that answer instead of going out again,
 * and each caller gets its own copy. Only the request id may differ (the subgraph logs the first
 * caller's, and with tracing on only the trace context: each caller's CLIENT span and the shared
 * call's link to each other), so callers with other credentials or another client address never share. Only a query
 * is shared: a body that does not begin with a query operation (a mutation, a persisted-query hash,
 * anything else) goes out on its own, and nothing is kept once the answer has arrived. Under ten
 * clients asking the same dashboard, the services did a fifth of the work per request with it.
 */
import http from 'node:http';
import https from 'node:https';
import type { Fetcher, FetcherHeaders, FetcherRequestInit, FetcherResponse } from '@apollo/utils.fetcher';
import { TRACE_HEADERS, endCall, linkSharedWork, startCall, withTraceHeaders } from '../platform/telemetry/spans';

/** How long a subgraph may take to answer (or stay silent mid-answer) before the call fails. */
export const SUBGRAPH_TIMEOUT_MS = 30_000;

/** The answer's headers, read-only, as the data source asks for them (`get('content-type')`). */
class AnswerHeaders implements FetcherHeaders {
  constructor(private readonly raw: http.IncomingHttpHeaders) {}

  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.raw)) yield [name, this.get(name) as string];
  }

  *keys(): IterableIterator<string> {
    yield* Object.keys(this.raw);
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  append(): void {
    throw new TypeError('the headers of a received answer are read-only');
  }

  delete(): void {
    throw new TypeError('the headers of a received answer are read-only');
  }

  set(): void {
    throw new TypeError('the headers of a received answer are read-only');
  }
}

class Answer implements FetcherResponse {
  bodyUsed = false;
  readonly redirected = false;
  readonly ok: boolean;
  readonly statusText: string;
  readonly headers: AnswerHeaders;

  constructor(
    readonly url: string,
    readonly status: number,
    statusText: string | undefined,
    headers: http.IncomingHttpHeaders,
    private readonly body: Buffer,
  ) {
    this.ok = status >= 200 && status < 300;
    this.statusText = statusText ?? http.STATUS_CODES[status] ?? '';
    this.headers = new AnswerHeaders(headers);
  }

  private consume(): Buffer {
    if (this.bodyUsed) throw new TypeError('the body has already been read');
    this.bodyUsed = true;
    return this.body;
  }

  async text(): Promise<string> {
    return this.consume().toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(this.consume().toString('utf8'));
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const body = this.consume();
    return body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
  }

  clone(): FetcherResponse {
    return new Answer(this.url, this.status, this.statusText, Object.fromEntries(this.headers.entries()), this.body);
  }
}

/** What one subgraph call brought back, shared by the callers of a deduplicated query. */
interface Received {
  status: number;
  statusText: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Headers that may differ between callers of one shared call: each request's own id and trace context. */
const PER_CALLER_HEADERS = new Set<string>(['x-request-id', ...TRACE_HEADERS]);

/**
 * The body @apollo/gateway's data source sends (`JSON.stringify({ query, ... })`, the query first)
 * for a query: the planner writes operations as `query…` or `{…}`. Any other shape is not shared.
 */
function isQueryBody(body: string | undefined): body is string {
  return body !== undefined && (body.startsWith('{"query":"query') || body.startsWith('{"query":"{'));
}

/** The identity of a call: URL, every header but the request id, and the body. */
function callKey(url: string, headers: Record<string, string>, body: string): string {
  let key = `${url}\n`;
  for (const name of Object.keys(headers).sort()) if (!PER_CALLER_HEADERS.has(name.toLowerCase())) key += `${name.toLowerCase()}: ${headers[name]}\n`;
  return `${key}\n${body}`;
}

/** A caller's CLIENT span (platform/telemetry/spans.ts), when tracing is on. */
type Call = ReturnType<typeof startCall>;

export interface SubgraphFetcherOptions {
  /** How long a subgraph may take to answer (or stay silent mid-answer); default SUBGRAPH_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Identical queries in flight share one call (see above); default true. */
  deduplicate?: boolean;
}

export interface SubgraphFetcher {
  fetch: Fetcher;
  /** Drops the kept-alive connections. */
  close(): void;
}

export function createSubgraphFetcher({ timeoutMs = SUBGRAPH_TIMEOUT_MS, deduplicate = true }: SubgraphFetcherOptions = {}): SubgraphFetcher {
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
  // A few subgraph URLs serve every call: each is parsed once.
  const targets = new Map<string, URL>();
  const inFlight = new Map<string, { received: Promise<Received>; call: Call }>();
  const targetOf = (url: string): URL => {
    let target = targets.get(url);
    if (!target) {
      target = new URL(url);
      targets.set(url, target);
    }
    return target;
  };

  const call = (target: URL, init: FetcherRequestInit, body: string | undefined) =>
    new Promise<Received>((resolve, reject) => {
      const client = target.protocol === 'https:' ? https : http;
      const agent = agents[target.protocol as keyof typeof agents];
      if (!agent) throw new TypeError(`subgraph URLs are http or https, not ${target.href}`);
      const headers: http.OutgoingHttpHeaders = { ...init.headers };
      if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
      const request = client.request(target, { method: init.method ?? 'GET', headers, agent, timeout: timeoutMs }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () => resolve({ status: response.statusCode ?? 0, statusText: response.statusMessage, headers: response.headers, body: Buffer.concat(chunks) }));
        response.once('error', reject);
        response.once('aborted', () => reject(new Error(`the answer from ${target.host} broke off`)));
      });
      request.once('timeout', () => request.destroy(Object.assign(new Error(`no answer from ${target.host} within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      request.once('error', reject);
      // Kept a string: node:http then sends the head and the body in one piece rather than two buffers.
      request.end(body);
    });

  /** One call for every identical query in flight; the first caller's call, the others wait on it. */
  const shared = (url: string, target: URL, init: FetcherRequestInit, body: string, traced: Call): Promise<Received> => {
    const key = callKey(url, init.headers ?? {}, body);
    const pending = inFlight.get(key);
    if (pending) {
      linkSharedWork(traced?.span, pending.call?.span);
      return pending.received;
    }
    const received = call(target, init, body).finally(() => inFlight.delete(key));
    inFlight.set(key, { received, call: traced });
    return received;
  };

  const fetch: Fetcher = async (url: string, init: FetcherRequestInit = {}) => {
    const body = typeof init.body === 'string' ? init.body : undefined;
    const target = targetOf(url);
    const method = init.method ?? 'GET';
    const traced = startCall(method, target);
    const sent = traced ? { ...init, headers: withTraceHeaders({ ...init.headers }, traced.context) } : init;
    try {
      const received = deduplicate && method === 'POST' && isQueryBody(body) ? await shared(url, target, sent, body, traced) : await call(target, sent, body);
      endCall(traced, received);
      return new Answer(url, received.status, received.statusText, received.headers, received.body);
    } catch (error) {
      endCall(traced, { error });
      throw error;
    }
  };
  return {
    fetch,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
