/**
 * The gateway (CONTRACT §9, port 8080): request ids, CORS, its own actuator, the REST path-proxy,
 * the federated GraphQL half when one is plugged in, the admin UI's static files at /admin, the REST
 * contract at /openapi.json and /docs, then the 404 and error envelopes. No business rule lives here
 * (STYLE 13), and no body is parsed before the proxy.
 */
import type http from 'node:http';
import cors from 'cors';
import express, { type Express, type RequestHandler } from 'express';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { SERVICE_NAMES, type Config, type ServiceName } from '../platform/config';
import { gatewayForwarding } from '../platform/forwarded';
import { actuatorRouter } from '../platform/actuator';
import { listen, type Listening } from '../platform/http';
import { traceRequests } from '../platform/telemetry/spans';
import type { EventBus } from '../platform/events/bus';
import type { Logger } from '../platform/logger';
import { outgoingHeaders } from '../platform/request-context';
import { errorHandler, methodNotAllowed, noSniff, notFoundHandler, requestId } from '../rest-compat/app';
import { loadOpenApiDocument } from '../rest-compat/openapi';
import { adminStatic } from './admin-static';
import { apiDocs } from './docs';
import { createRestProxy } from './proxy';

/** Drains what the GraphQL half started (the Apollo server and gateway); `stop()` awaits it. */
export type GraphqlStop = () => Promise<void>;

/** Answers a request on the server before the Express app and returns true, or returns false and leaves it to the app. */
export type FrontHandler = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

/** What a mounted GraphQL half gives back: its stop, and the requests it answers before the app. */
export interface MountedGraphql {
  stop: GraphqlStop;
  front?: FrontHandler;
  /** Ends what would keep a connection open (subscription streams) before the server drains. */
  beforeClose?: () => void;
}

/**
 * Mounts `/graphql` (with its own JSON parser) on the gateway's app, after the REST proxy and before
 * the 404 handler, with the gateway's metrics registry for its own counters, and returns its stop
 * and front handler.
 */
export type MountGraphql = (app: Express, registry: Registry) => MountedGraphql | Promise<MountedGraphql>;

/** What the GraphQL half (gateway/graphql.ts) hands the starters: given config, logger and the bus its subscriptions follow, its mount hook. */
export type GraphqlHalf = (deps: { config: Config; logger: Logger; bus?: EventBus }) => MountGraphql;

export interface GatewayDeps {
  config: Config;
  logger: Logger;
  mountGraphql?: MountGraphql;
  /** The upstreams `/actuator/health` asks; default every service of the proxy table. */
  healthChecks?: readonly ServiceName[];
  /** Connect-and-answer deadline for proxied requests; default 30 s. */
  upstreamTimeoutMs?: number;
  /** The built admin UI served at /admin; default dist/admin (ADMIN_DIST_DIR). */
  adminDir?: string;
}

export interface GatewayRuntime {
  readonly name: 'gateway';
  readonly app: Express;
  /** Resolves with the bound port (useful with port 0). */
  start(port: number, host?: string): Promise<number>;
  stop(): Promise<void>;
}

const HEALTH_TIMEOUT_MS = 2000;

/** An upstream's own health: it answers UP in time, or the check rejects with why not. */
async function upstreamHealth(url: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`${url}/actuator/health`, { headers: outgoingHeaders(), signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
  } catch (error) {
    if (error instanceof Error && error.name === 'TimeoutError') throw new Error(`no answer within ${HEALTH_TIMEOUT_MS} ms`);
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    throw cause ? new Error(cause) : error;
  }
  const body = (await res.json().catch(() => undefined)) as { status?: unknown } | undefined;
  if (!res.ok || body?.status !== 'UP') throw new Error(`health answered ${res.status}`);
}

/** A page served from the developer's own machine, on any port. */
const LOCAL_DEV_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1):\d{1,5}$/;

/** Browsers get CORS headers only for the configured origins (and local pages when allowed); the gateway answers their preflights. */
function corsFor(origins: readonly string[], allowLocalhost: boolean): RequestHandler[] {
  if (origins.length === 0 && !allowLocalhost) return [];
  const anyOrigin = origins.includes('*');
  const allowed = (origin: string) => origins.includes(origin) || (allowLocalhost && LOCAL_DEV_ORIGIN.test(origin));
  const policy = cors({
    origin: anyOrigin ? '*' : (origin, allow) => allow(null, origin !== undefined && allowed(origin) ? origin : false),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [
      'Authorization',
      'Content-Type',
      'X-Request-Id',
      'Apollo-Require-Preflight',
      'X-Apollo-Operation-Name',
      // Who a GraphQL client is, for the schema registry's field usage (gateway/usage-reporting.ts).
      'Apollographql-Client-Name',
      'Apollographql-Client-Version',
      'Graphql-Client-Name',
      'Graphql-Client-Version',
    ],
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-Total-Count'],
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
  // The answer depends on Origin for every caller, allowed or not, so no cache mixes them up.
  const varyOnOrigin: RequestHandler = (_req, res, next) => {
    res.vary('Origin');
    next();
  };
  return anyOrigin ? [policy] : [varyOnOrigin, policy];
}

export async function createGateway(deps: GatewayDeps): Promise<GatewayRuntime> {
  const { config } = deps;
  const logger = deps.logger.child({ service: 'gateway' });
  const healthChecks = deps.healthChecks ?? SERVICE_NAMES;

  const registry = new Registry();
  registry.setDefaultLabels({ service: 'gateway' });
  collectDefaultMetrics({ register: registry });
  // Who the client is: the connection's address unless it is a proxy TRUST_PROXY names (platform/forwarded.ts).
  const forwarding = gatewayForwarding(config.trustProxy);
  const cors = corsFor(config.corsOrigins, config.corsAllowLocalhost);
  const proxy = createRestProxy({ config, logger, registry, timeoutMs: deps.upstreamTimeoutMs, forwardedHeaders: forwarding.headers });
  const openApiDocument = loadOpenApiDocument();

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', forwarding.trustProxy);
  app.use(noSniff, requestId, ...cors);

  const upstreams = Object.fromEntries(healthChecks.map((name) => [name, () => upstreamHealth(config.urls[name])]));
  app.use(actuatorRouter({ name: 'gateway', description: 'REST path-proxy and federated GraphQL entry point', health: upstreams, registry, otherMethods: methodNotAllowed }));

  app.use(proxy.handler);
  const graphql = await deps.mountGraphql?.(app, registry);
  app.use(adminStatic(deps.adminDir));
  // The REST contract, parsed once here: /openapi.json and the Swagger UI reference at /docs.
  app.use(apiDocs(openApiDocument));
  app.use(notFoundHandler());
  app.use(errorHandler(logger));

  // Proxied REST requests and JSON GraphQL posts are answered before the app, which has nothing to
  // add to them; a browser's request while CORS is on goes through the app for its CORS answer.
  const front: FrontHandler = (req, res) => (cors.length === 0 || req.headers.origin === undefined) && (proxy.direct(req, res) || graphql?.front?.(req, res) === true);

  let listening: Listening | undefined;
  return {
    name: 'gateway',
    app,
    async start(port, host = '0.0.0.0') {
      listening = await listen(
        traceRequests(
          'gateway',
          (req, res) => {
            if (!front(req, res)) app(req, res);
          },
          // A client's trace context is a link, not a parent, unless a proxy TRUST_PROXY names sent it:
          // no client chooses to be traced, or under which trace id.
          { trustsCaller: (req) => forwarding.trustProxy(req.socket.remoteAddress ?? '') },
        ),
        port,
        host,
      );
      logger.info({ port: listening.port }, 'gateway listening');
      return listening.port;
    },
    async stop() {
      graphql?.beforeClose?.();
      await listening?.close();
      await graphql?.stop();
      proxy.close();
      logger.info('gateway stopped');
    },
  };
}
