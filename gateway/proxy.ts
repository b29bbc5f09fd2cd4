/**
 * The REST half of the gateway (CONTRACT §9): a path-proxy table over http-proxy-middleware. Paths,
 * bodies and answers pass unchanged; the gateway adds X-Request-Id and X-Forwarded-*, hides the
 * internal-only route, and answers the contract's 503 for a service that is down or too slow.
 */
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Config, ServiceName } from '../platform/config';
import type { Logger } from '../platform/logger';
import { errorEnvelope, notFound } from '../rest-compat/errors';

/** Path prefix → service. A prefix matches itself and what lies below it, never `/authors`. */
export const PROXY_TABLE: readonly { prefix: string; service: ServiceName }[] = [
  { prefix: '/auth', service: 'auth' },
  { prefix: '/api/user', service: 'user' },
  { prefix: '/api/books', service: 'book' },
  { prefix: '/api/orders', service: 'order' },
  { prefix: '/api/payments', service: 'payment' },
  { prefix: '/analytics', service: 'analytics' },
];

/** Routes that services call on each other; from outside they do not exist (404). */
const INTERNAL_ONLY = ['/api/user/create'];

/** How long an upstream may take to connect and answer, or stall mid-answer, before the client gets 503. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;

/** The path of a request target: up to `?` or `#`. */
export function pathnameOf(url: string): string {
  return url.split(/[?#]/, 1)[0];
}

/** The service a path belongs to. Case-insensitive, as the services' own routing is. */
export function upstreamFor(pathname: string): ServiceName | undefined {
  const path = pathname.toLowerCase();
  return PROXY_TABLE.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`))?.service;
}

/**
 * The path as the most lenient reader could take it: percent-decoded until nothing changes (double
 * encoding included), backslashes as slashes (`url.parse` in http-proxy does that), lower case, empty
 * segments dropped (http-proxy collapses `//`), dot segments resolved, `;params` and blanks at the
 * ends of a segment removed. Internal routes are refused on this form, so no such trick reaches them.
 */
export function canonicalPath(pathname: string): string {
  let path = pathname;
  for (;;) {
    const decoded = path.replace(/%([0-9a-f]{2})/gi, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (decoded === path) break;
    path = decoded;
  }
  const segments: string[] = [];
  for (const raw of path.replace(/\\/g, '/').toLowerCase().split('/')) {
    // eslint-disable-next-line no-control-regex
    const segment = raw.split(';', 1)[0].replace(/^[\s\u0000-\u001f\u007f]+|[\s\u0000-\u001f\u007f]+$/g, '');
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

export function isInternalOnly(pathname: string): boolean {
  const path = canonicalPath(pathname);
  return INTERNAL_ONLY.some((route) => path === route || path.startsWith(`${route}/`));
}

export interface RestProxyOptions {
  /** Read at each request, so services may move (tests start them on port 0 first). */
  config: Pick<Config, 'urls'>;
  logger: Logger;
  registry: Registry;
  timeoutMs?: number;
}

export interface RestProxy {
  handler: RequestHandler;
  /** Drops the kept-alive upstream connections. */
  close(): void;
}

export function createRestProxy(options: RestProxyOptions): RestProxy {
  const { config, logger } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const upstreamOf = new WeakMap<http.IncomingMessage, ServiceName>();

  const duration = new Histogram({
    name: 'gateway_upstream_request_duration_seconds',
    help: 'Proxied REST request duration by upstream service, method and status',
    labelNames: ['upstream', 'method', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [options.registry],
  });
  const unavailable = new Counter({
    name: 'gateway_upstream_unavailable_total',
    help: 'Proxied REST requests answered 503 because the upstream was down or too slow',
    labelNames: ['upstream'],
    registers: [options.registry],
  });

  const answerUnavailable = (error: Error, req: Request, res: Response | Socket) => {
    const upstream = upstreamOf.get(req) ?? 'unknown';
    unavailable.inc({ upstream });
    logger.warn({ err: error, upstream, requestId: req.requestId, path: req.path }, 'upstream unavailable');
    if (!('headersSent' in res) || res.headersSent) {
      // Nothing sensible can follow a half-sent answer: cut it so the client sees the failure.
      res.destroy();
      return;
    }
    res.status(503).json(errorEnvelope(503, `Service unavailable: ${upstream}`, pathnameOf(req.originalUrl)));
  };

  // Keep-alive: without an agent http-proxy sends `Connection: close` and pays a handshake per request.
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  const proxyWith = (agent: http.Agent) =>
    createProxyMiddleware<Request, Response>({
      router: (req) => config.urls[upstreamOf.get(req) as ServiceName],
      agent,
      // The Host the target expects (virtual hosts, TLS names); the client's is in X-Forwarded-Host.
      changeOrigin: true,
      xfwd: true,
      // Answers pass as the service wrote them, header-name case included.
      preserveHeaderKeyCase: true,
      // Stalls once connected; the deadline below also covers connecting and waiting for the head.
      proxyTimeout: timeoutMs,
      on: {
        proxyReq: (proxyReq) => {
          const deadline = setTimeout(() => {
            proxyReq.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
          }, timeoutMs);
          proxyReq.once('response', () => clearTimeout(deadline));
          proxyReq.once('close', () => clearTimeout(deadline));
        },
        error: answerUnavailable,
      },
    });
  const viaHttp = proxyWith(agents.http);
  const viaHttps = proxyWith(agents.https);

  const handler: RequestHandler = (req, res, next) => {
    const pathname = pathnameOf(req.url);
    if (isInternalOnly(pathname)) throw notFound(`No route for ${req.method} ${req.path}`, 'ROUTE_NOT_FOUND');
    // Only origin-form targets (`/path`) are routed; `http://host/path` and `*` end in the 404.
    const upstream = pathname.startsWith('/') ? upstreamFor(pathname) : undefined;
    if (upstream === undefined) {
      next();
      return;
    }
    upstreamOf.set(req, upstream);
    // The id the gateway settled on (a valid incoming one, or a new one) is the one the service sees.
    req.headers['x-request-id'] = req.requestId;
    const end = duration.startTimer({ upstream, method: req.method });
    res.once('close', () => end({ status: String(res.statusCode) }));
    const proxy = config.urls[upstream].startsWith('https:') ? viaHttps : viaHttp;
    return proxy(req, res, next);
  };

  return {
    handler,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
