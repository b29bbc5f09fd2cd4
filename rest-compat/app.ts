/**
 * The app factory every service uses: request ids, metrics, actuator routes, JSON bodies with the
 * contract's 4xx answers, the service's own routes, then 404 and the error envelope.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type ErrorRequestHandler, type RequestHandler } from 'express';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { actuatorRouter, type HealthCheck } from '../platform/actuator';
import { databaseOutage } from '../platform/database';
import { trustGatewayOnly, type ForwardedTrust } from '../platform/forwarded';
import type { Logger } from '../platform/logger';
import { runInContext } from '../platform/request-context';
import { jsonAnswers } from './json-answers';
import { AppError, errorEnvelope } from '../platform/errors';

export interface ServiceAppOptions {
  name: string;
  description: string;
  logger: Logger;
  /** Named dependency checks; `/actuator/health` is UP only when every one resolves. */
  health: Record<string, HealthCheck>;
  /** Routes that need the raw body (a signed webhook), mounted before JSON parsing. */
  mountRaw?: (app: Express) => void;
  mount: (app: Express) => void;
  /** Whose forwarded headers to believe (the gateway's: platform/forwarded.ts); unset, nobody's. */
  trustProxy?: ForwardedTrust;
  /** Adds the service's own metrics to what `/actuator/prometheus` reports. */
  registerMetrics?: (registry: Registry) => void;
}

export const BODY_LIMIT = '1mb';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A well-formed incoming `X-Request-Id`, or a new one; echoed on the response. */
function settleRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/**
 * For a request answered on the server before the app (the gateway's REST proxy and GraphQL
 * posts): what `noSniff` and `requestId` below give every answer. Returns the request id.
 */
export function answeredBeforeTheApp(req: IncomingMessage, res: ServerResponse): string {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  return settleRequestId(req, res);
}
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Every answer of every service and of the gateway (CONTRACT §1.2): browsers never guess a content type. */
export const noSniff: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
};

/**
 * Keeps a well-formed incoming `X-Request-Id`, or makes one, and echoes it on the response; the rest
 * of the request runs in a request context holding it and the caller's Authorization
 * (platform/request-context.ts), for the log lines and for the calls to other services.
 */
export const requestId: RequestHandler = (req, res, next) => {
  req.requestId = settleRequestId(req, res);
  runInContext({ requestId: req.requestId, authorization: req.headers.authorization }, next);
};

function hasBody(req: express.Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** A body on a JSON route must be declared as JSON (415 otherwise). */
const requireJsonContentType: RequestHandler = (req, _res, next) => {
  if (BODY_METHODS.has(req.method) && hasBody(req) && !req.is(['application/json', 'application/*+json'])) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json', 415);
  }
  next();
};

/** Answers 405 on a known path with a method it does not serve; put last on a `router.route()`. */
export const methodNotAllowed: RequestHandler = (req, res) => {
  const route = req.route as { methods?: Record<string, boolean> } | undefined;
  const allowed = Object.keys(route?.methods ?? {})
    .filter((method) => !method.startsWith('_'))
    .map((method) => method.toUpperCase());
  if (allowed.includes('GET')) allowed.push('HEAD');
  res.setHeader('Allow', allowed.join(', '));
  throw new AppError('METHOD_NOT_ALLOWED', `Method ${req.method} is not supported for ${req.originalUrl.split('?')[0]}`, 405);
};

/**
 * The client errors that Express and its body parsers raise themselves, as AppErrors: a body that
 * cannot be parsed, read or inflated, and a path parameter that is not valid percent-encoding.
 * Anything else is left to the 500 answer.
 */
function frameworkClientError(error: unknown): AppError | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const known = bodyParserError(error);
  if (known) return known;
  const status = (error as { status?: unknown }).status;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  // The router's decodeParam: `/api/user/%ZZ`.
  if (error instanceof URIError) return new AppError('MALFORMED_PATH', 'The request path is not valid percent-encoding', 400);
  // A body the parser could not inflate (Content-Encoding gzip, deflate or br over other bytes).
  return new AppError('BAD_REQUEST', 'The request body could not be read', status);
}

function bodyParserError(error: { type?: string }): AppError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return new AppError('MALFORMED_JSON', 'Malformed JSON request body', 400);
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds the ${BODY_LIMIT} limit`, 413);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported request body encoding', 415);
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new AppError('BAD_REQUEST', 'The request body could not be read', 400);
    default:
      return undefined;
  }
}

function causeText(cause: unknown): string {
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const known = error instanceof AppError ? error : (frameworkClientError(error) ?? databaseOutage(error));
    if (res.headersSent) {
      logger.error({ err: error }, 'error after the response started');
      res.destroy();
      return;
    }
    if (!known) {
      logger.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
      res.status(500).json(errorEnvelope(500, 'An unexpected error occurred', req.originalUrl.split('?')[0]));
      return;
    }
    // A 5xx's cause (a provider's own error text) is logged, never answered.
    if (known.status >= 500) logger.warn({ code: known.code, ...(known.cause === undefined ? {} : { cause: causeText(known.cause) }) }, known.message);
    for (const [name, value] of Object.entries(known.headers)) res.setHeader(name, value);
    res.status(known.status).json(errorEnvelope(known.status, known.message, req.originalUrl.split('?')[0], known.validationErrors));
  };
}

export function notFoundHandler(): RequestHandler {
  return (req) => {
    throw new AppError('ROUTE_NOT_FOUND', `No route for ${req.method} ${req.path}`, 404);
  };
}

function metrics(name: string): { registry: Registry; middleware: RequestHandler } {
  const registry = new Registry();
  registry.setDefaultLabels({ service: name });
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'http_server_requests_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'http_server_errors_total',
    help: 'HTTP answers with a 5xx status',
    labelNames: ['route'],
    registers: [registry],
  });
  const middleware: RequestHandler = (req, res, next) => {
    const end = duration.startTimer();
    res.on('finish', () => {
      const route = req.route ? `${req.baseUrl}${(req.route as { path: string }).path}` : 'unmatched';
      end({ method: req.method, route, status: String(res.statusCode) });
      if (res.statusCode >= 500) errors.inc({ route });
    });
    next();
  };
  return { registry, middleware };
}

export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  const forwarded = trustGatewayOnly(app, options.trustProxy);
  app.set('etag', false);

  const { registry, middleware: measure } = metrics(options.name);
  options.registerMetrics?.(registry);
  app.use(forwarded, noSniff, requestId, measure, jsonAnswers());

  // Like every other route, the actuator routes answer 405 (with Allow) to a method they do not serve.
  app.use(actuatorRouter({ name: options.name, description: options.description, health: options.health, registry, otherMethods: methodNotAllowed }));

  options.mountRaw?.(app);
  app.use(requireJsonContentType, express.json({ limit: BODY_LIMIT }));
  options.mount(app);
  app.use(notFoundHandler());
  app.use(errorHandler(options.logger));
  return app;
}
