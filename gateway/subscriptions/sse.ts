/**
 * GraphQL over Server-Sent Events at the gateway's `/graphql` (the `graphql-sse` protocol's distinct
 * connections mode, through the `graphql-sse` library's handler): a `POST` (or `GET`) that accepts
 * `text/event-stream` opens a stream of one subscription. Before a stream is accepted the caller
 * is verified (401) and counted against the limits per caller and per process (429); a document
 * that does not parse, validate or name a live subscription field is answered with its errors on
 * the stream, as the protocol asks. Each `next` event carries the answer's revision as its SSE `id`.
 */
import type http from 'node:http';
import { createHandler, type ExecutionResult, type Response as SseResponse } from 'graphql-sse';
import { GraphQLError, parse, specifiedRules, validate, type GraphQLSchema, type ValidationRule } from 'graphql';
import { bearerToken, type TokenVerifier } from '../../platform/auth';
import { AppError } from '../../platform/errors';
import type { GatewayForwarding } from '../../platform/forwarded';
import { GRAPHQL_CODES } from '../../platform/graphql-errors';
import type { Logger } from '../../platform/logger';
import type { LiveHub } from './hub';
import { toLiveRequest, type LiveField } from './live-fields';
import type { Caller, LiveStream } from './stream';

export const TOO_MANY_SUBSCRIPTIONS = 'TOO_MANY_SUBSCRIPTIONS';
/** What a refused client is told to wait before trying again. */
const RETRY_AFTER_SECONDS = 30;

export interface SseOptions {
  hub: LiveHub;
  /** The API schema, which the documents are validated against. */
  schema: GraphQLSchema;
  fields: ReadonlyMap<string, LiveField>;
  verifier: TokenVerifier;
  limits: { perCaller: number; perProcess: number };
  validationRules: readonly ValidationRule[];
  maxTokens: number;
  forwarding: GatewayForwarding | undefined;
  logger: Logger;
}

interface StreamContext {
  res: http.ServerResponse;
  stream?: LiveStream;
}

/** Whether a request asks for an event stream. */
export function wantsEventStream(req: http.IncomingMessage): boolean {
  return (req.headers.accept ?? '').includes('text/event-stream');
}

function refusal(status: number, statusText: string, code: string, message: string, headers: Record<string, string> = {}): SseResponse {
  return [JSON.stringify({ errors: [{ message, extensions: { code } }] }), { status, statusText, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } }];
}

/** Errors sent on the accepted stream (graphql-sse reads a result only when it has `data`). */
const onTheStream = (errors: { message: string; extensions: { code: string } }[]): ExecutionResult => ({ data: null, errors: errors as unknown as GraphQLError[] });

/** The `exp` and `iat` of a token already verified. */
function lifetimeOf(token: string): { expiresAtMs: number; issuedAtMs: number } {
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: number; iat?: number };
  return { expiresAtMs: (claims.exp ?? 0) * 1000, issuedAtMs: (claims.iat ?? 0) * 1000 };
}

async function callerOf(req: http.IncomingMessage, options: SseOptions): Promise<{ caller: Caller } | { refused: SseResponse }> {
  const authorization = req.headers.authorization;
  const token = bearerToken(authorization);
  if (!token || !authorization) return { refused: refusal(401, 'Unauthorized', GRAPHQL_CODES.UNAUTHENTICATED, 'A subscription needs a valid bearer token') };
  try {
    const principal = await options.verifier.verify(token);
    return {
      caller: {
        userId: principal.userId.toLowerCase(),
        role: principal.role,
        sessionId: principal.sessionId.toLowerCase(),
        ...lifetimeOf(token),
        authorization,
        forwarded: options.forwarding?.headers(req),
      },
    };
  } catch (error) {
    if (error instanceof AppError && error.status === 503) return { refused: refusal(503, 'Service Unavailable', GRAPHQL_CODES.SERVICE_UNAVAILABLE, error.message) };
    return { refused: refusal(401, 'Unauthorized', GRAPHQL_CODES.UNAUTHENTICATED, 'A subscription needs a valid bearer token') };
  }
}

/** The handler of event-stream requests; `body` is the request's parsed body (trusted documents resolved). */
export function sseEndpoint(options: SseOptions): (req: http.IncomingMessage, res: http.ServerResponse, body: unknown) => Promise<void> {
  const { hub, limits } = options;
  const rules = [...specifiedRules, ...options.validationRules];
  const handler = createHandler<http.IncomingMessage, StreamContext>({
    // Distinct connections only: one stream per request, authorized by the request itself.
    authenticate: () => null,
    onSubscribe: async (req, params) => {
      const verified = await callerOf(req.raw, options);
      if ('refused' in verified) return verified.refused;
      const { caller } = verified;
      if (hub.size >= limits.perProcess) {
        return refusal(429, 'Too Many Requests', TOO_MANY_SUBSCRIPTIONS, `This gateway holds its most subscriptions (${limits.perProcess}); try again later`, {
          'retry-after': String(RETRY_AFTER_SECONDS),
        });
      }
      if (hub.count((other) => other.userId === caller.userId) >= limits.perCaller) {
        return refusal(429, 'Too Many Requests', TOO_MANY_SUBSCRIPTIONS, `At most ${limits.perCaller} subscriptions may be open at once; close one first`, {
          'retry-after': String(RETRY_AFTER_SECONDS),
        });
      }
      let document;
      try {
        document = parse(params.query, { noLocation: false, maxTokens: options.maxTokens });
      } catch (error) {
        return onTheStream([{ message: error instanceof Error ? error.message : String(error), extensions: { code: 'GRAPHQL_PARSE_FAILED' } }]);
      }
      const invalid = validate(options.schema, document, rules);
      if (invalid.length > 0) return onTheStream(invalid.map((error) => ({ message: error.message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })));
      const request = toLiveRequest(options.schema, options.fields, document, params.operationName ?? undefined, params.variables ?? undefined);
      if (request instanceof GraphQLError) {
        const code = request.extensions.code;
        return onTheStream([{ message: request.message, extensions: { code: typeof code === 'string' ? code : GRAPHQL_CODES.BAD_USER_INPUT } }]);
      }
      const { res } = req.context;
      const stream = hub.subscribe(request, caller, res);
      req.context.stream = stream;
      res.once('close', () => stream.end());
      return stream.results() as AsyncGenerator<ExecutionResult>;
    },
  });

  return async (req, res, body) => {
    const context: StreamContext = { res };
    const [payload, init] = await handler({
      method: req.method ?? 'GET',
      url: req.url ?? '/graphql',
      headers: {
        // The library compares the whole header; a browser's may list other types beside it.
        get: (key) => (key === 'accept' ? 'text/event-stream' : ([] as string[]).concat(req.headers[key.toLowerCase()] ?? []).join(', ') || undefined),
      },
      body: body as Record<string, unknown> | null,
      raw: req,
      context,
    });
    // Proxies that buffer (nginx) pass the events on as they come.
    res.writeHead(init.status, init.statusText, { ...init.headers, 'x-accel-buffering': 'no' });
    if (!payload || typeof payload === 'string') {
      res.end(payload ?? undefined);
      return;
    }
    const stop = () => void payload.return(undefined);
    res.once('close', stop);
    try {
      for await (const chunk of payload) {
        const id = chunk.startsWith('event: next') ? context.stream?.revisions.shift() : undefined;
        if (!res.write(id ? `id: ${id}\n${chunk}` : chunk)) await new Promise<void>((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
        if (res.destroyed) break;
      }
    } catch (error) {
      options.logger.error({ err: error }, 'subscription stream failed');
    } finally {
      res.off('close', stop);
      res.end();
    }
  };
}
