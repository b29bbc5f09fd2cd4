/**
 * GraphQL subscriptions at the gateway (docs/subscriptions.md), which @apollo/gateway does not
 * execute: the Subscription fields the subgraphs declare with `@fromEvents` (live-fields.ts) are
 * served over Server-Sent Events at `/graphql` (sse.ts), answered by running the subscriber's
 * selection as a query through the gateway's own Apollo Server with the subscriber's token (hub.ts),
 * again whenever the bus brings an event that concerns it (feed.ts).
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import { Supergraph } from '@apollo/federation-internals';
import type { RequestHandler } from 'express';
import { parse, type ValidationRule } from 'graphql';
import type { Registry } from 'prom-client';
import { INTERNAL_KEY_HEADER, jwksVerifierFor, type TokenVerifier } from '../../platform/auth';
import type { Config } from '../../platform/config';
import { AFTER_EVENTS_HEADER, afterEventsHeader } from '../../platform/events/after-events';
import type { EventBus, Subscription } from '../../platform/events/bus';
import type { GatewayForwarding } from '../../platform/forwarded';
import { sendJson } from '../../platform/http';
import type { Logger } from '../../platform/logger';
import { runInContext } from '../../platform/request-context';
import { inSpan } from '../../platform/telemetry/spans';
import { answeredBeforeTheApp } from '../../rest-compat/app';
import type { GatewayContext } from '../subgraph-source';
import type { TrustedDocuments } from '../trusted-documents';
import { followLiveTopics } from './feed';
import { LiveHub, type RunQuery } from './hub';
import { liveFieldsOf } from './live-fields';
import { sseEndpoint, wantsEventStream } from './sse';
import type { LiveResult } from './stream';

export interface LiveSubscriptionsDeps {
  config: Pick<Config, 'urls' | 'internalApiKey' | 'jwt' | 'subscriptionLimits'>;
  bus: EventBus;
  logger: Logger;
  supergraphSdl: string;
  /** The gateway's Apollo Server once started: the federated query path every answer goes through. */
  server: () => ApolloServer<GatewayContext> | undefined;
  trusted: TrustedDocuments;
  forwarding: GatewayForwarding | undefined;
  validationRules: readonly ValidationRule[];
  maxTokens: number;
  registry?: Registry;
  /** Default: the auth service's JWKS, following session revocations. */
  verifier?: TokenVerifier;
}

export interface LiveSubscriptions {
  /** Takes an event-stream request to `/graphql` before the app (see GraphqlGateway.front); false for any other. */
  front(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** The same on the app's `/graphql` route (a browser's request under CORS), after the JSON body parser. */
  middleware: RequestHandler;
  start(): Promise<void>;
  /** Ends every open stream (before the server drains its connections). */
  close(): void;
  stop(): Promise<void>;
}

const BODY_LIMIT_BYTES = 1024 * 1024;

/** A POST body as the JSON route would read it: an object, or undefined for the 400. */
function jsonBody(bytes: Buffer): unknown {
  if (bytes.length === 0) return {};
  try {
    return JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, '')) as unknown;
  } catch {
    return undefined;
  }
}

export function liveSubscriptions(deps: LiveSubscriptionsDeps): LiveSubscriptions {
  const logger = deps.logger.child({ component: 'subscriptions' });
  const apiSchema = Supergraph.build(deps.supergraphSdl).apiSchema().toGraphQLJSSchema();
  const fields = liveFieldsOf(parse(deps.supergraphSdl), apiSchema);
  const verifier = deps.verifier ?? jwksVerifierFor(deps.config, { bus: deps.bus, logger, service: 'gateway' });

  const run: RunQuery = (request, caller, after) => {
    const server = deps.server();
    if (!server) return Promise.reject(new Error('the GraphQL server is not running'));
    const requestId = randomUUID();
    const forwarded: Record<string, string> = { ...caller.forwarded };
    if (after.length > 0) {
      forwarded[AFTER_EVENTS_HEADER] = afterEventsHeader(after);
      forwarded[INTERNAL_KEY_HEADER] = deps.config.internalApiKey;
    }
    return runInContext({ requestId, authorization: caller.authorization }, () =>
      inSpan(`subscription ${request.field.name}`, { attributes: { 'graphql.operation.type': 'subscription', 'bookstore.live.events': after.length } }, async () => {
        const headers = new HeaderMap([
          ['content-type', 'application/json'],
          ['authorization', caller.authorization],
          ['x-request-id', requestId],
        ]);
        const response = await server.executeHTTPGraphQLRequest({
          httpGraphQLRequest: {
            method: 'POST',
            headers,
            search: '',
            body: { query: request.query, variables: request.variables, ...(request.operationName ? { operationName: request.operationName } : {}) },
          },
          context: async () => ({ forwarded }),
        });
        if (response.body.kind !== 'complete') throw new Error('a live query was answered in parts');
        return JSON.parse(response.body.string) as LiveResult;
      }),
    );
  };

  const hub = new LiveHub({ fields, run, logger, registry: deps.registry });
  const serve = sseEndpoint({
    hub,
    schema: apiSchema,
    fields,
    verifier,
    limits: deps.config.subscriptionLimits,
    validationRules: deps.validationRules,
    maxTokens: deps.maxTokens,
    forwarding: deps.forwarding,
    logger,
  });
  const subscriptions: Subscription[] = [];

  /** The trusted documents' refusal of a request, or the body to run (a GET's document is in its URL). */
  const admitted = (req: http.IncomingMessage, body: unknown): { body: unknown } | { refusal: { status: number; body: unknown } } => {
    if (req.method === 'POST') {
      if (body === undefined) return { refusal: { status: 400, body: { errors: [{ message: 'Malformed JSON request body', extensions: { code: 'BAD_REQUEST' } }] } } };
      return deps.trusted.resolve(body);
    }
    const text = new URL(req.url ?? '/', 'http://gateway').searchParams.get('query');
    const refused = text === null ? undefined : deps.trusted.admitsText(text);
    return refused ? { refusal: refused } : { body: undefined };
  };

  /** Serves an event-stream request whose body is read (or absent, for a GET), trusted documents applied. */
  const answer = (req: http.IncomingMessage, res: http.ServerResponse, raw: unknown): void => {
    const checked = admitted(req, raw);
    if ('refusal' in checked) {
      sendJson(res, checked.refusal.status, checked.refusal.body);
      return;
    }
    serve(req, res, checked.body).catch((error: unknown) => {
      logger.error({ err: error }, 'subscription request failed');
      if (!res.headersSent) sendJson(res, 500, { errors: [{ message: 'An unexpected error occurred', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      else res.destroy();
    });
  };

  const isStreamRequest = (req: http.IncomingMessage) => (req.method === 'POST' || req.method === 'GET') && wantsEventStream(req);

  return {
    front(req, res) {
      if (new URL(req.url ?? '/', 'http://gateway').pathname !== '/graphql' || !isStreamRequest(req)) return false;
      const requestId = answeredBeforeTheApp(req, res);
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > BODY_LIMIT_BYTES) req.destroy();
        else chunks.push(chunk);
      });
      req.once('error', () => res.destroy());
      req.once('end', () => {
        runInContext({ requestId, authorization: req.headers.authorization }, () => {
          answer(req, res, req.method === 'POST' ? jsonBody(Buffer.concat(chunks)) : undefined);
        });
      });
      return true;
    },
    middleware(req, res, next) {
      if (isStreamRequest(req)) answer(req, res, req.method === 'POST' ? req.body : undefined);
      else next();
    },
    async start() {
      if (verifier.follow) subscriptions.push(await verifier.follow());
      subscriptions.push(await followLiveTopics(deps.bus, hub, logger));
    },
    close() {
      hub.close();
    },
    async stop() {
      hub.close();
      await Promise.all(subscriptions.splice(0).map((subscription) => subscription.stop()));
    },
  };
}
