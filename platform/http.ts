/**
 * HTTP plumbing shared by services: listening with a graceful stop, and calls to another service
 * that turn "down or too slow" into the contract's 503.
 */
import { randomUUID } from 'node:crypto';
import http, { STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { errorEnvelope, serviceUnavailable } from './errors';
import { outgoingHeaders } from './request-context';
import { endCall, startCall, withTraceHeaders } from './telemetry/spans';

export interface Listening {
  server: http.Server;
  port: number;
  close(): Promise<void>;
}

/** `app`: an Express app, or any request listener in front of one (the gateway's REST proxy). */
export function listen(app: http.RequestListener, port: number, host = '0.0.0.0'): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
    server.on('request', trackInFlight(server));
    server.on('request', app);
    server.keepAliveTimeout = 65_000;
    server.on('clientError', answerClientError);
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({ server, port: (server.address() as AddressInfo).port, close: () => closeServer(server) });
    });
  });
}

const inFlight = new WeakMap<http.Server, Set<http.ServerResponse>>();

/**
 * Keeps the responses under way, so a closing server can tell their keep-alive connections to
 * close once answered, and wait for them; a request arriving on such a connection while the server
 * closes gets the same word. A response stays under way until its handler ends it, even when the
 * client left before: its handler may still be using the database the service is about to close.
 * Put before the app's own listener.
 */
function trackInFlight(server: http.Server): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const responses = new Set<http.ServerResponse>();
  inFlight.set(server, responses);
  return (_req, res) => {
    responses.add(res);
    res.once('close', () => {
      if (res.writableEnded) {
        responses.delete(res);
        return;
      }
      // The client left first; no event follows the handler's own end, so the end says it.
      const end = res.end.bind(res);
      res.end = ((...args: Parameters<typeof end>) => {
        responses.delete(res);
        return end(...args);
      }) as typeof res.end;
    });
    if (!server.listening) res.setHeader('Connection', 'close');
  };
}

/**
 * Stops accepting (new connections are refused), lets in-flight requests finish (up to `graceMs`),
 * then drops what is left. A kept-alive connection closes as soon as its request is answered,
 * rather than idling until the client or the grace period ends it. Resolves once every handler has
 * ended its response, including those whose client went away, or the grace period is over.
 */
export function closeServer(server: http.Server, graceMs = 10_000): Promise<void> {
  const responses = inFlight.get(server) ?? new Set<http.ServerResponse>();
  const deadline = Date.now() + graceMs;
  return new Promise<void>((resolve) => {
    for (const res of responses) if (!res.headersSent) res.setHeader('Connection', 'close');
    // Responses that had already started (or servers not made by listen) leave idle connections behind.
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    sweep.unref();
    force.unref();
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  }).then(async () => {
    while (responses.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  });
}

export interface CallOptions {
  /** Names the dependency in the 503 message. */
  service: string;
  timeoutMs?: number;
  /** On the caller's behalf: the call carries the caller's Authorization from the request context. */
  asCaller?: boolean;
}

/**
 * `fetch` to another service, carrying the current request's id (and with `asCaller` the caller's
 * token) from the request context, and the trace context of its CLIENT span; a refused connection
 * or a timeout becomes 503.
 */
export async function callService(url: string, init: RequestInit, options: CallOptions): Promise<Response> {
  const headers = new Headers(init.headers);
  const call = startCall(init.method ?? 'GET', url);
  const carried = call ? withTraceHeaders(outgoingHeaders(options.asCaller), call.context) : outgoingHeaders(options.asCaller);
  for (const [name, value] of Object.entries(carried)) if (!headers.has(name)) headers.set(name, value);
  // Between services the bytes as they are: compressing them (rest-compat/json-answers.ts) would cost both sides CPU for a network that is not the bottleneck.
  if (!headers.has('accept-encoding')) headers.set('accept-encoding', 'identity');
  try {
    const response = await fetch(url, { ...init, headers, signal: AbortSignal.timeout(options.timeoutMs ?? 5000) });
    endCall(call, response);
    return response;
  } catch (error) {
    endCall(call, { error });
    throw serviceUnavailable(`The ${options.service} service is unavailable`, `${options.service.toUpperCase()}_UNAVAILABLE`);
  }
}

/** The path of the request line Node could not parse, if it got that far; the envelope needs one. */
function requestPath(rawPacket: unknown): string {
  const head = Buffer.isBuffer(rawPacket) ? rawPacket.toString('latin1', 0, Math.min(rawPacket.length, 2048)) : '';
  return /^[A-Z]+ (\/[!-~]*?)(?:[?#][!-~]*)? HTTP\//.exec(head)?.[1] ?? '/';
}

/** A whole JSON answer on the bare response, as Express's `res.status(status).json()` sends it, for code that answers before an app. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * Requests Node's parser refuses (a header block over the size limit, bad characters in the target
 * or a header) never reach Express, and Node would answer them with an empty body: they get the
 * contract's envelope like every other error.
 */
function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message = status === 431 ? 'Request header fields too large' : status === 408 ? 'Request timeout' : 'Malformed HTTP request';
  const body = JSON.stringify(errorEnvelope(status, message, requestPath(error.rawPacket)));
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    'X-Content-Type-Options: nosniff',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${randomUUID()}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}
