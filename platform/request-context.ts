/**
 * What the work under way knows about the request (or event) it serves, without a parameter in
 * every signature: the request-id middleware sets it for each HTTP request (REST and GraphQL alike),
 * the event consumers for each event. The logger reads it, so every line carries the ids, and so do
 * the calls to other services, which forward the request id and, on the caller's behalf, its token.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestContext {
  /** The request's `X-Request-Id`. */
  requestId?: string;
  /** The caller's `Authorization` header as received, for calls made on the caller's behalf. */
  authorization?: string;
  /** The event a consumer is applying. */
  eventId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `work` (and everything it starts) in `context`, replacing any context around it. */
export function runInContext<T>(context: RequestContext, work: () => T): T {
  return storage.run(context, work);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

/** The ids of the current request or event, for a log line; nothing outside of one. */
export function contextLogFields(): { requestId?: string; eventId?: string } {
  const context = storage.getStore();
  if (!context) return {};
  const fields: { requestId?: string; eventId?: string } = {};
  if (context.requestId) fields.requestId = context.requestId;
  if (context.eventId) fields.eventId = context.eventId;
  return fields;
}

/**
 * The headers a call to another service carries for the current request: its id, and with
 * `asCaller` the caller's Authorization, so the other service authorizes the caller, not this one.
 */
export function outgoingHeaders(asCaller = false): Record<string, string> {
  const context = storage.getStore();
  const headers: Record<string, string> = {};
  if (context?.requestId) headers['x-request-id'] = context.requestId;
  if (asCaller && context?.authorization) headers.authorization = context.authorization;
  return headers;
}
