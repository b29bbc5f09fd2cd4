/**
 * The REST half of the gateway (CONTRACT §9): a path-proxy table (gateway/proxy-routes.ts) over
 * kept-alive upstream connections (undici's dispatcher; the gateway's own server is node:http).
 * Paths, bodies and answers pass unchanged (bodies are streamed, never parsed); the gateway adds
 * X-Request-Id and sets X-Forwarded-* (who the client is, believed by the services only from the
 * gateway: platform/forwarded.ts), hides the internal-only route, and answers the contract's 503 for
 * a service that is down or too slow. It does per request only what that takes: a profile under
 * load had http-proxy-middleware's layers among the gateway's hottest frames, and later Express's
 * router and a second timer per request. So a proxied request is answered before the Express app
 * sees it (`direct`, put in front of the app on the server), with the same headers the app's
 * middleware would add; what needs the app (the 404 of an internal-only route, a browser's request
 * while CORS is on: gateway/index.ts) goes through it, to the same proxy as a middleware.
 */
import type http from 'node:http';
import { PassThrough } from 'node:stream';
import type { RequestHandler } from 'express';
import { Agent, type Dispatcher } from 'undici';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Config, ServiceName } from '../platform/config';
import type { Logger } from '../platform/logger';
import { errorEnvelope, notFound } from '../platform/errors';
import { sendJson } from '../platform/http';
import { endCall, startCall, withTraceHeaders } from '../platform/telemetry/spans';
import { answeredBeforeTheApp } from '../rest-compat/app';
import { isInternalOnly, pathnameOf, upstreamFor } from './proxy-routes';

/** How long an upstream may take to connect and answer, or stall mid-answer, before the client gets 503. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;

/** Headers about one connection, not the message (RFC 9110 §7.6.1): neither forwarded nor passed back. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect', 'host']);

/** The header names a Connection header lists (they describe that connection too), lower case. */
function connectionNamed(value: string | undefined): Set<string> | undefined {
  if (value === undefined || value === '' || value.toLowerCase() === 'keep-alive' || value.toLowerCase() === 'close') return undefined;
  return new Set(value.split(',').map((name) => name.trim().toLowerCase()));
}

export interface RestProxyOptions {
  /** Read at each request, so services may move (tests start them on port 0 first). */
  config: Pick<Config, 'urls'>;
  logger: Logger;
  registry: Registry;
  timeoutMs?: number;
  /** The X-Forwarded-* headers (and the gateway's proof) a service gets for a request (platform/forwarded.ts). */
  forwardedHeaders: (req: http.IncomingMessage) => Record<string, string>;
}

export interface RestProxy {
  /**
   * Put before the Express app on the server: proxies a request for a service and returns true, or
   * returns false and leaves it to the app (every other path, internal-only routes for the 404).
   * A proxied request needs nothing else of the app, so the hot path skips Express's router and
   * request decoration.
   */
  direct(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** The same as an Express middleware, for what `direct` leaves to the app. */
  handler: RequestHandler;
  /** Drops the kept-alive upstream connections. */
  close(): void;
}

/** What every proxied request uses: the options, the upstream connections and the metrics. */
interface Upstreams extends RestProxyOptions {
  dispatcher: Agent;
  /** Each service's base URL, parsed once. */
  targets: Map<string, URL>;
  duration: Histogram<'upstream' | 'method' | 'status'>;
  unavailable: Counter<'upstream'>;
}

export function createRestProxy(options: RestProxyOptions): RestProxy {
  const timeoutMs = options.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const upstreams: Upstreams = {
    ...options,
    // Upstream connections are kept alive and reused (a connection per request would pay a TCP
    // handshake each time), through undici: beside a node:http client doing the same forward, it took
    // a sixth less CPU per request. One bound covers connecting, waiting for the answer's head and a
    // stall mid-answer: before the head the client gets the 503; after it, the answer is cut and the
    // client sees it broken off. A client that stalls its own upload is bounded by the gateway
    // server's request timeout (Node's `requestTimeout`, 300 s), which ends the upstream request too.
    dispatcher: new Agent({ connectTimeout: timeoutMs, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
    targets: new Map(),
    duration: new Histogram({
      name: 'gateway_upstream_request_duration_seconds',
      help: 'Proxied REST request duration by upstream service, method and status',
      labelNames: ['upstream', 'method', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [options.registry],
    }),
    unavailable: new Counter({
      name: 'gateway_upstream_unavailable_total',
      help: 'Proxied REST requests answered 503 because the upstream was down or too slow',
      labelNames: ['upstream'],
      registers: [options.registry],
    }),
  };
  return {
    direct(req, res) {
      const upstream = upstreamOf(req);
      if (upstream === undefined) return false;
      proxy(upstreams, req, res, upstream, answeredBeforeTheApp(req, res));
      return true;
    },
    handler(req, res, next) {
      const upstream = upstreamOf(req);
      if (upstream !== undefined) {
        proxy(upstreams, req, res, upstream, req.requestId);
        return;
      }
      if (isInternalOnly(pathnameOf(req.url))) throw notFound(`No route for ${req.method} ${req.path}`, 'ROUTE_NOT_FOUND');
      next();
    },
    close() {
      void upstreams.dispatcher.destroy();
    },
  };
}

/** The service a request goes to, or undefined for the app to answer. */
function upstreamOf(req: http.IncomingMessage): ServiceName | undefined {
  const url = req.url ?? '';
  // Only origin-form targets (`/path`) are routed; `http://host/path` and `*` end in the 404.
  if (!url.startsWith('/')) return undefined;
  const pathname = pathnameOf(url);
  return isInternalOnly(pathname) ? undefined : upstreamFor(pathname);
}

/** The gateway's part of a proxied request: the request id settled on, the forwarded headers set, the request sent. */
function proxy(upstreams: Upstreams, req: http.IncomingMessage, res: http.ServerResponse, upstream: ServiceName, requestId: string): void {
  const forwarded = upstreams.forwardedHeaders(req);
  req.headers['x-request-id'] = requestId;
  delete req.headers.forwarded;
  Object.assign(req.headers, forwarded);
  forward(upstreams, req, res, upstream, requestId, forwarded);
}

/**
 * Sends `req` to the upstream and streams its answer back: the path and query as received, the
 * body bytes as they arrive, the answer's status, headers (in the service's spelling) and body.
 * Headers that describe one connection rather than the message (RFC 9110 §7.6.1) stay on their
 * side: each hop frames and keeps alive its own connection.
 */
function forward(upstreams: Upstreams, req: http.IncomingMessage, res: http.ServerResponse, upstream: ServiceName, requestId: string, forwarded: Record<string, string>): void {
  const target = targetOf(upstreams.targets, upstreams.config.urls[upstream]);
  const bodiless = req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined;
  const headers = upstreamHeaders(req, target, bodiless, forwarded);
  // With tracing on, a CLIENT span for the upstream call; the upstream continues the trace from it.
  const call = startCall(req.method ?? 'GET', target, { 'bookstore.upstream': upstream });
  if (call) withTraceHeaders(headers, call.context);
  let failed = false;
  let abort: ((reason: Error) => void) | undefined;
  const fail = (error: Error) => {
    if (failed) return;
    failed = true;
    answerUnavailable(upstreams, error, req, res, upstream, requestId);
  };
  const end = upstreams.duration.startTimer({ upstream, method: req.method });
  res.once('close', () => {
    end({ status: String(res.statusCode) });
    endCall(call, { status: res.statusCode });
    // A client that goes away takes the upstream request with it.
    if (!res.writableFinished) abort?.(new Error('the client went away'));
  });
  const handler = answerStream(res, fail, (abortUpstream) => (abort = abortUpstream));
  try {
    upstreams.dispatcher.dispatch(
      {
        origin: target.origin,
        path: `${target.pathname === '/' ? '' : target.pathname}${req.url ?? ''}`,
        method: req.method as Dispatcher.HttpMethod,
        headers,
        body: bodiless ? null : forwardedBody(req, res),
      },
      handler,
    );
  } catch (error) {
    // A request undici refuses outright (the dispatcher closed while the gateway stops).
    fail(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * The client's body as the upstream request reads it. Not `req` itself: undici destroys a request
 * body it stops sending (the service answered before reading it all: a 415, a 413, a 401, or the
 * service went away), and a destroyed `req` that the client has not finished sending leaves the
 * client's kept-alive connection stalled on Node 26 (its parser waits on a body nobody reads; Node
 * 24 dropped the connection instead). So once the answer is sent, whatever the client still sends
 * of this body is read and discarded, as Node does with a body no handler read, and the connection
 * serves the client's next request; the upstream request, cut short, is not reused.
 */
function forwardedBody(req: http.IncomingMessage, res: http.ServerResponse): PassThrough {
  const body = req.pipe(new PassThrough());
  res.once('finish', () => {
    if (req.complete) return;
    req.unpipe(body);
    body.destroy();
    req.resume();
  });
  return body;
}

function targetOf(targets: Map<string, URL>, base: string): URL {
  let target = targets.get(base);
  if (!target) {
    target = new URL(base);
    targets.set(base, target);
  }
  return target;
}

/**
 * The request's headers as the upstream gets them: the connection's own left out, the target's
 * Host. What the gateway set (the request id, the forwarded headers and the proof) goes on even when
 * the client's Connection header names it: no client can take them off its request that way.
 */
function upstreamHeaders(req: http.IncomingMessage, target: URL, bodiless: boolean, forwarded: Record<string, string>): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  const named = connectionNamed(req.headers.connection);
  for (const name in req.headers) {
    const value = req.headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named?.has(name)) headers[name] = value;
  }
  if (named) {
    headers['x-request-id'] = req.headers['x-request-id'] ?? '';
    Object.assign(headers, forwarded);
  }
  // The Host the target expects (virtual hosts, TLS names); the client's goes on in X-Forwarded-Host.
  headers.host = target.host;
  if ((req.method === 'DELETE' || req.method === 'OPTIONS') && bodiless) headers['content-length'] = '0';
  return headers;
}

/**
 * The dispatch handler that streams the upstream's answer into `res`, pausing the upstream while
 * the client reads slower; `onStart` is handed the abort of the upstream request once it exists.
 */
function answerStream(res: http.ServerResponse, fail: (error: Error) => void, onStart: (abort: (reason: Error) => void) => void): Dispatcher.DispatchHandler {
  return {
    onRequestStart(controller) {
      onStart((reason) => controller.abort(reason));
      if (res.destroyed) controller.abort(new Error('the client went away'));
    },
    onResponseStart(controller, statusCode, parsed, statusMessage) {
      res.statusCode = statusCode;
      if (statusMessage) res.statusMessage = statusMessage;
      setAnswerHeaders(res, controller.rawHeaders, parsed);
      res.on('drain', () => controller.resume());
    },
    onResponseData(controller, chunk) {
      if (!res.write(chunk)) controller.pause();
    },
    onResponseEnd() {
      res.end();
    },
    onResponseError(_controller, error) {
      if (res.destroyed) return;
      fail(error);
    },
  };
}

/** The answer's headers on `res` as the service wrote them, header-name case included, the connection's own left out. */
function setAnswerHeaders(res: http.ServerResponse, rawHeaders: Dispatcher.DispatchController['rawHeaders'], parsed: http.IncomingHttpHeaders): void {
  const raw = Array.isArray(rawHeaders) ? rawHeaders.map((part) => (typeof part === 'string' ? part : part.toString('latin1'))) : undefined;
  const pairs: [string, string | string[]][] = [];
  if (raw) for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i], raw[i + 1]]);
  else for (const [name, value] of Object.entries(parsed)) if (value !== undefined) pairs.push([name, value]);
  const answerNamed = new Set<string>();
  for (const [name, value] of pairs) if (name.toLowerCase() === 'connection') for (const listed of connectionNamed(String(value)) ?? []) answerNamed.add(listed);
  const seen = new Set<string>();
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || answerNamed.has(lower)) continue;
    const previous = seen.has(lower) ? res.getHeader(name) : undefined;
    seen.add(lower);
    // The answer's header replaces one the gateway set (its request id); a header the answer
    // repeats keeps every value: Set-Cookie as a list, any other joined as one field.
    if (previous === undefined) res.setHeader(name, value);
    else if (lower === 'set-cookie') res.setHeader(name, [...(Array.isArray(previous) ? previous : [String(previous)]), ...(Array.isArray(value) ? value : [value])]);
    else res.setHeader(name, `${String(previous)}, ${Array.isArray(value) ? value.join(', ') : value}`);
  }
}

/** The contract's 503 for a service that is down or too slow, or a cut answer when it had begun. */
function answerUnavailable(upstreams: Upstreams, error: Error, req: http.IncomingMessage, res: http.ServerResponse, upstream: ServiceName, requestId: string): void {
  upstreams.unavailable.inc({ upstream });
  const path = pathnameOf(req.url ?? '');
  upstreams.logger.warn({ err: error, upstream, requestId, path }, 'upstream unavailable');
  if (res.headersSent) {
    // Nothing sensible can follow a half-sent answer: cut it so the client sees the failure.
    res.destroy();
    return;
  }
  sendJson(res, 503, errorEnvelope(503, `Service unavailable: ${upstream}`, path));
}
