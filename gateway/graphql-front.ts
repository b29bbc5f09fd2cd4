/**
 * The front path of the gateway's /graphql: the requests nearly every client sends (see
 * GraphqlGateway.front) answered on the server, before the Express app, by the same Apollo Server.
 */
import type http from 'node:http';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { GatewayForwarding } from '../platform/forwarded';
import { GRAPHQL_CODES, INTERNAL_ERROR_MESSAGE } from '../platform/graphql-errors';
import { sendJson } from '../platform/http';
import type { Logger } from '../platform/logger';
import { runInContext } from '../platform/request-context';
import { answeredBeforeTheApp } from '../rest-compat/app';
import type { FrontHandler } from './index';
import type { RequestSharing, SharedAnswer } from './shared-requests';
import type { GatewayContext } from './subgraph-source';
import type { TrustedDocuments } from './trusted-documents';
import type { UsageReporting } from './usage-reporting';

/** The answer to a body that is not JSON, on either path. */
export const MALFORMED_JSON = { errors: [{ message: 'Malformed JSON request body', extensions: { code: GRAPHQL_CODES.BAD_REQUEST } }] };

/** `express.json({ limit: GRAPHQL_BODY_LIMIT })`'s limit (gateway/graphql.ts) in bytes. */
const GRAPHQL_BODY_LIMIT_BYTES = 1024 * 1024;
/** The media types `express.json()` reads as they are; any other goes through the app. */
const PLAIN_JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

/** A request the front path can take: see GraphqlGateway.front (gateway/graphql.ts). */
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

type ApolloAnswer = Awaited<ReturnType<ApolloServer<GatewayContext>['executeHTTPGraphQLRequest']>>;

/** An answer whose body is whole, as every client sharing it gets it (gateway/shared-requests.ts). */
function whole(response: ApolloAnswer): SharedAnswer | undefined {
  return response.body.kind === 'complete' ? { status: response.status ?? 200, headers: [...response.headers], body: response.body.string } : undefined;
}

function send(res: http.ServerResponse, answer: SharedAnswer): void {
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  res.statusCode = answer.status;
  res.setHeader('Content-Length', Buffer.byteLength(answer.body));
  res.end(answer.body);
}

async function sendStreamed(res: http.ServerResponse, response: ApolloAnswer): Promise<void> {
  const answer = whole(response);
  if (answer) {
    send(res, answer);
    return;
  }
  for (const [name, value] of response.headers) res.setHeader(name, value);
  res.statusCode = response.status ?? 200;
  if (response.body.kind === 'chunked') for await (const chunk of response.body.asyncIterator) res.write(chunk);
  res.end();
}

/** The Apollo Server's answer to one JSON post, as expressMiddleware would send it; shared with identical requests in flight. */
async function answer(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  running: ApolloServer<GatewayContext>,
  bytes: Buffer,
  { forwarding, trusted, sharing, usage }: Pick<GraphqlFrontOptions, 'forwarding' | 'trusted' | 'sharing' | 'usage'>,
): Promise<void> {
  const parsed = parseJsonBody(bytes);
  if (parsed === undefined) {
    sendJson(res, 400, MALFORMED_JSON);
    return;
  }
  const resolved = trusted.resolve(parsed);
  if ('refusal' in resolved) {
    sendJson(res, resolved.refusal.status, resolved.refusal.body);
    return;
  }
  const { body } = resolved;
  const forwarded = forwarding?.headers(req);
  const execute = () => {
    const headers = new HeaderMap();
    for (const name in req.headers) {
      const value = req.headers[name];
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    return running.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: 'POST', headers, search: '', body },
      context: async () => ({ forwarded }),
    });
  };
  const key = sharing.keyOf(req, bytes, body, forwarded);
  if (key !== undefined) {
    // The first of identical requests runs; an answer it cannot share (streamed) it sends itself.
    const own: { response?: ApolloAnswer } = {};
    const shared = await sharing.share(key, async () => {
      own.response = await execute();
      return whole(own.response);
    });
    if (shared) {
      if (!own.response) usage?.recordShared(body, req.headers);
      send(res, shared);
      return;
    }
    if (own.response) {
      await sendStreamed(res, own.response);
      return;
    }
  }
  await sendStreamed(res, await execute());
}

export interface GraphqlFrontOptions {
  /** The Apollo Server once /graphql is mounted; until then every request goes to the app. */
  server: () => ApolloServer<GatewayContext> | undefined;
  forwarding: GatewayForwarding | undefined;
  /** Documents by id, and the trusted documents mode (gateway/trusted-documents.ts). */
  trusted: TrustedDocuments;
  /** Identical queries in flight share one execution (gateway/shared-requests.ts). */
  sharing: RequestSharing;
  /** Field usage (gateway/usage-reporting.ts): a request answered with another's answer counts here. */
  usage?: UsageReporting;
  logger: Logger;
}

export function graphqlFront({ server, forwarding, trusted, sharing, usage, logger }: GraphqlFrontOptions): FrontHandler {
  return (req, res) => {
    const running = server();
    if (!running || !plainJsonPost(req)) return false;
    const id = answeredBeforeTheApp(req, res);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('error', () => res.destroy());
    req.once('end', () => {
      runInContext({ requestId: id, authorization: req.headers.authorization }, () => {
        answer(req, res, running, Buffer.concat(chunks), { forwarding, trusted, sharing, usage }).catch((error: unknown) => {
          logger.error({ err: error, requestId: id }, 'graphql gateway error');
          if (res.headersSent) res.destroy();
          else sendJson(res, 500, { errors: [{ message: INTERNAL_ERROR_MESSAGE, extensions: { code: GRAPHQL_CODES.INTERNAL_SERVER_ERROR } }] });
        });
      });
    });
    return true;
  };
}
