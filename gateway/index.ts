/**
 * The gateway (CONTRACT §9, port 8080): request ids, CORS, its own actuator, the REST path-proxy,
 * the federated GraphQL half when one is plugged in, the admin UI's static files at /admin, the REST
 * contract at /openapi.json and /docs, then the 404 and error envelopes. No business rule lives here
 * (STYLE 13), and no body is parsed before the proxy.
 */
import cors from 'cors';
import express, { type Express, type RequestHandler } from 'express';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { SERVICE_NAMES, type Config, type ServiceName } from '../platform/config';
import { listen, type Listening } from '../platform/http';
import type { Logger } from '../platform/logger';
import { errorHandler, methodNotAllowed, notFoundHandler, requestId } from '../rest-compat/app';
import { loadOpenApiDocument } from '../rest-compat/openapi';
import { adminStatic } from './admin-static';
import { apiDocs } from './docs';
import { createRestProxy } from './proxy';

/** Drains what the GraphQL half started (the Apollo server and gateway); `stop()` awaits it. */
export type GraphqlStop = () => Promise<void>;

/**
 * Mounts `/graphql` (with its own JSON parser) on the gateway's app, after the REST proxy and before
 * the 404 handler. It may return a stop function.
 */
export type MountGraphql = (app: Express) => void | GraphqlStop | Promise<void | GraphqlStop>;

/** What the GraphQL half (gateway/graphql.ts) hands the starters: given config and logger, its mount hook. */
export type GraphqlHalf = (deps: { config: Config; logger: Logger }) => MountGraphql;

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

type Component = { status: 'UP' } | { status: 'DOWN'; error: string };

async function upstreamHealth(url: string, requestIdValue: string): Promise<Component> {
  try {
    const res = await fetch(`${url}/actuator/health`, { headers: { 'X-Request-Id': requestIdValue }, signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    const body = (await res.json().catch(() => undefined)) as { status?: unknown } | undefined;
    return res.ok && body?.status === 'UP' ? { status: 'UP' } : { status: 'DOWN', error: `health answered ${res.status}` };
  } catch (error) {
    if (error instanceof Error && error.name === 'TimeoutError') return { status: 'DOWN', error: `no answer within ${HEALTH_TIMEOUT_MS} ms` };
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { status: 'DOWN', error: cause ?? (error instanceof Error ? error.message : String(error)) };
  }
}

/** Browsers get CORS headers only for the configured origins; the gateway answers their preflights. */
function corsFor(origins: readonly string[]): RequestHandler[] {
  if (origins.length === 0) return [];
  const anyOrigin = origins.includes('*');
  const policy = cors({
    origin: anyOrigin ? '*' : (origin, allow) => allow(null, origin !== undefined && origins.includes(origin) ? origin : false),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'Apollo-Require-Preflight', 'X-Apollo-Operation-Name'],
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy'],
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
  const proxy = createRestProxy({ config, logger, registry, timeoutMs: deps.upstreamTimeoutMs });
  const openApiDocument = loadOpenApiDocument();

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId, ...corsFor(config.corsOrigins));

  app
    .route('/actuator/health')
    .get(async (req, res) => {
      const components = Object.fromEntries(await Promise.all(healthChecks.map(async (name) => [name, await upstreamHealth(config.urls[name], req.requestId)] as const)));
      const up = Object.values(components).every((component) => component.status === 'UP');
      res.status(up ? 200 : 503).json({ status: up ? 'UP' : 'DOWN', components });
    })
    .all(methodNotAllowed);
  app
    .route('/actuator/info')
    .get((_req, res) => {
      res.json({ app: { name: 'gateway', description: 'REST path-proxy and federated GraphQL entry point' }, node: process.version });
    })
    .all(methodNotAllowed);
  app
    .route('/actuator/prometheus')
    .get(async (_req, res) => {
      res.type(registry.contentType).send(await registry.metrics());
    })
    .all(methodNotAllowed);

  app.use(proxy.handler);
  const stopGraphql = (await deps.mountGraphql?.(app)) ?? undefined;
  app.use(adminStatic(deps.adminDir));
  // The REST contract, parsed once here: /openapi.json and the Swagger UI reference at /docs.
  app.use(apiDocs(openApiDocument));
  app.use(notFoundHandler());
  app.use(errorHandler(logger));

  let listening: Listening | undefined;
  return {
    name: 'gateway',
    app,
    async start(port, host = '0.0.0.0') {
      listening = await listen(app, port, host);
      logger.info({ port: listening.port }, 'gateway listening');
      return listening.port;
    },
    async stop() {
      await listening?.close();
      await stopGraphql?.();
      proxy.close();
      logger.info('gateway stopped');
    },
  };
}
