/**
 * Identical GraphQL requests from clients in flight share one execution (`GATEWAY_DEDUPLICATE_REQUESTS`,
 * on by default; what Hive Gateway calls inbound in-flight request deduplication): a query whose body
 * and headers equal those of one the gateway is still answering waits for that answer instead of being
 * validated, planned, executed and serialised again, and gets the same status, headers and body under
 * its own request id. The subgraph fetcher (gateway/subgraph-fetcher.ts) shares identical subgraph
 * calls in flight the same way; this shares the gateway's own work before them, which under ten
 * clients asking the same dashboard was most of the gateway's CPU per request.
 *
 * What decides "identical": the body's bytes, every header but those that differ per request and
 * change nothing in the answer (the request id, trace context, the body's length, the connection's
 * own), and who the subgraphs are told the client is (the forwarded headers, from the connection's
 * address). So callers with other credentials, another `Accept` or another client address never
 * share. Only a query shares: a mutation, a subscription, a document that names no single operation,
 * one that does not parse, a batch, an id with no text, or a client asking for incremental delivery
 * runs on its own. Nothing is kept once the answer is written: it is not a cache, and a request that
 * arrives a moment after an answer went out runs again.
 *
 * Each shared request counts in `gateway_graphql_shared_requests_total`; with tracing on, its span
 * and the one of the request whose answer it got link to each other.
 */
import type http from 'node:http';
import { OperationTypeNode, getOperationAST, parse } from 'graphql';
import { Counter, type Registry } from 'prom-client';
import { currentSpan, linkSharedWork } from '../platform/telemetry/spans';
import { isRecord } from './trusted-documents';

/** An answer as it goes to every client that shares it. */
export interface SharedAnswer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** Headers that differ between identical requests without changing the answer. */
const PER_REQUEST_HEADERS = new Set(['x-request-id', 'traceparent', 'tracestate', 'content-length', 'connection', 'keep-alive']);

/** Distinct documents whose operation type is remembered before the memory starts again. */
const KINDS_KEPT = 1_000;

export interface RequestSharingOptions {
  enabled: boolean;
  /** The parser's token limit of the GraphQL limits (platform/query-limits.ts), for a document read here. */
  maxTokens: number;
  registry?: Registry;
}

export interface RequestSharing {
  /** The key identical requests share, or undefined when this request runs on its own. */
  keyOf(req: http.IncomingMessage, bytes: Buffer, body: unknown, forwarded: Record<string, string> | undefined): string | undefined;
  /**
   * The answer of the identical request in flight, or `run`'s, which requests arriving meanwhile
   * get too. `run` answers undefined for an answer it cannot share (it sends that one itself); the
   * requests waiting on it then run their own.
   */
  share(key: string, run: () => Promise<SharedAnswer | undefined>): Promise<SharedAnswer | undefined>;
}

export function requestSharing({ enabled, maxTokens, registry }: RequestSharingOptions): RequestSharing {
  const inFlight = new Map<string, { answer: Promise<SharedAnswer | undefined>; span: ReturnType<typeof currentSpan> }>();
  const queries = new Map<string, boolean>();
  const shared = new Counter({
    name: 'gateway_graphql_shared_requests_total',
    help: 'GraphQL requests answered with the answer of an identical request in flight (GATEWAY_DEDUPLICATE_REQUESTS)',
    registers: registry ? [registry] : [],
  });

  /** Whether the operation a body runs is a query: read once per distinct document and name. */
  const isQuery = (query: string, operationName: unknown): boolean => {
    if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return false;
    const key = `${operationName ?? ''}\n${query}`;
    let answer = queries.get(key);
    if (answer === undefined) {
      try {
        answer = getOperationAST(parse(query, { noLocation: true, maxTokens }), operationName)?.operation === OperationTypeNode.QUERY;
      } catch {
        answer = false;
      }
      if (queries.size >= KINDS_KEPT) queries.clear();
      queries.set(key, answer);
    }
    return answer;
  };

  return {
    keyOf(req, bytes, body, forwarded) {
      if (!enabled || !isRecord(body) || typeof body.query !== 'string') return undefined;
      if (req.headers.accept?.includes('multipart')) return undefined;
      if (!isQuery(body.query, body.operationName)) return undefined;
      let key = '';
      for (const name in req.headers) {
        if (!PER_REQUEST_HEADERS.has(name)) key += `${name}:${String(req.headers[name])}\n`;
      }
      if (forwarded) key += `${JSON.stringify(forwarded)}\n`;
      return key + bytes.toString('latin1');
    },
    share(key, run) {
      const pending = inFlight.get(key);
      if (pending) {
        shared.inc();
        linkSharedWork(currentSpan(), pending.span);
        return pending.answer;
      }
      const answer = run().finally(() => inFlight.delete(key));
      inFlight.set(key, { answer, span: currentSpan() });
      return answer;
    },
  };
}
