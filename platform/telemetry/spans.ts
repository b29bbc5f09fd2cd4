/**
 * The spans of the hops this project owns, made the same way in every runtime (a process, the
 * embedded default, a test): a request received, a call to another service, an event published
 * from the outbox and an event consumed. Trace context travels in W3C `traceparent`/`tracestate`
 * headers, on HTTP and on bus messages alike. While tracing is off each helper costs one check.
 *
 * Messaging follows OpenTelemetry's conventions: the outbox relay's `send <topic>` span (PRODUCER)
 * is a child of the request that recorded the event, and the context the message carries is that
 * span's; a consumer's `process <topic>` span (CONSUMER) is a child of the message's context when it
 * handles one message, and links to every message's context when it handles a batch. A batch whose
 * messages all belong to one trace continues that trace (a child of the first), so one checkout
 * reads as one trace whichever way its events were batched.
 */
import type http from 'node:http';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  isSpanContextValid,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { serviceTracer, tracingOn } from './tracing';

/**
 * The tracer for a span whose parent is in this process: the span goes to the parent's service
 * (platform/telemetry/tracing.ts), so a helper needs no service name.
 */
const localTracer = () => trace.getTracer('bookstore');

export { tracingOn } from './tracing';

/** The headers that carry trace context; a call that already has them was traced by our own code. */
export const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;

/** `headers` with the current (or `of`) context's trace headers added; unchanged while tracing is off. */
export function withTraceHeaders<H extends Record<string, unknown>>(headers: H, of: Context = context.active()): H {
  if (tracingOn()) propagation.inject(of, headers);
  return headers;
}

/** The trace context a set of headers carries (none: the root context). */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined> | undefined): Context {
  return headers ? propagation.extract(ROOT_CONTEXT, headers) : ROOT_CONTEXT;
}

/** Runs `work` outside any trace: background loops woken by a request (the outbox relay) are not part of it. */
export function detached<T>(work: () => T): T {
  return tracingOn() ? context.with(ROOT_CONTEXT, work) : work();
}

/** Ends `span` as failed with `error`. */
export function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  span.end();
}

export interface InSpanOptions {
  /** The service the span belongs to; default the parent's. */
  service?: string;
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** Default the current context. */
  parent?: Context;
}

/**
 * `work` inside a span (a child of the current span unless `parent` says otherwise), ended when
 * `work` settles; a rejection marks it failed. The span is handed to `work`.
 */
export function inSpan<T>(name: string, options: InSpanOptions, work: (span: Span | undefined) => Promise<T>): Promise<T> {
  // Every transaction passes here: while tracing is off, `work`'s own promise, nothing wrapped around it.
  return tracingOn() ? inNewSpan(name, options, work) : work(undefined);
}

async function inNewSpan<T>(name: string, options: InSpanOptions, work: (span: Span | undefined) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  const tracer = options.service ? serviceTracer(options.service) : localTracer();
  const span = tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links }, parent);
  try {
    const result = await context.with(trace.setSpan(parent, span), () => work(span));
    span.end();
    return result;
  } catch (error) {
    failSpan(span, error);
    throw error;
  }
}

/** The current span, when tracing is on and there is one. */
export function currentSpan(): Span | undefined {
  return tracingOn() ? trace.getActiveSpan() : undefined;
}

/**
 * Marks `follower` as answered by work `leader` did for an identical request in flight (shared by
 * deduplication), and links the two spans both ways, so either trace leads to the other.
 */
export function linkSharedWork(follower: Span | undefined, leader: Span | undefined): void {
  if (!follower || !leader) return;
  follower.setAttribute('bookstore.deduplicated', true);
  follower.addLink({ context: leader.spanContext() });
  leader.addLink({ context: follower.spanContext() });
}

/** A path's segments that are ids (numbers, UUIDs, long hex or ISBN-like tokens) as `{id}`, so span names stay few. */
export function routeOf(url: string | undefined): string {
  const path = (url ?? '/').split('?')[0];
  return path.replace(/\/(?:\d[\d-]*|[0-9a-fA-F-]{16,}|[0-9a-fA-F]{8}-[0-9a-zA-Z-]+)(?=\/|$)/g, '/{id}');
}

export interface TraceRequestsOptions {
  /**
   * Whose trace context a request may continue (the gateway: the proxies TRUST_PROXY names). From
   * anyone else the request starts a trace of its own, under this process's sampler, linked to the
   * context it carried; that context's headers are removed, so nothing behind sees them either.
   * Without it every caller is trusted (a service behind the gateway).
   */
  trustsCaller?: (req: http.IncomingMessage) => boolean;
}

/** Removes the trace context a caller sent and answers it as a link, when it is a valid one. */
function untrustedContext(req: http.IncomingMessage): Link[] | undefined {
  const carried = spanContextOf(req.headers as Record<string, string>);
  for (const name of TRACE_HEADERS) delete req.headers[name];
  return carried ? [{ context: carried, attributes: { 'bookstore.link': 'caller' } }] : undefined;
}

/**
 * The request listener of `service` with a SERVER span around each request, a child of the context
 * the request carries when the caller is trusted with it (`options.trustsCaller`), else the root of
 * a trace of its own linked to it. Health and metrics probes (`/actuator/**`) are left out: they
 * would bury the traces a person looks for. While tracing is off, the listener itself, after the
 * trace context of a caller not trusted with it is removed.
 */
export function traceRequests(service: string, listener: http.RequestListener, options: TraceRequestsOptions = {}): http.RequestListener {
  const { trustsCaller } = options;
  if (!tracingOn()) {
    if (!trustsCaller) return listener;
    return (req, res) => {
      if (!trustsCaller(req)) for (const name of TRACE_HEADERS) delete req.headers[name];
      listener(req, res);
    };
  }
  return (req, res) => {
    if (req.url?.startsWith('/actuator')) {
      listener(req, res);
      return;
    }
    const trusted = !trustsCaller || trustsCaller(req);
    const links = trusted ? undefined : untrustedContext(req);
    const parent = trusted ? contextFromHeaders(req.headers) : ROOT_CONTEXT;
    const method = req.method ?? 'GET';
    const span = serviceTracer(service).startSpan(method, { kind: SpanKind.SERVER, links }, parent);
    // A request the sampler left out still carries its context on (so the services leave it out
    // too), but costs nothing more.
    if (span.isRecording()) {
      const route = routeOf(req.url);
      span.updateName(`${method} ${route}`);
      span.setAttributes({ 'http.request.method': method, 'url.path': route, 'server.port': req.socket.localPort });
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        else if (!res.writableEnded) span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away before the answer ended' });
        span.end();
      });
    }
    const active = trace.setSpan(parent, span);
    // A body read with `req.on('data'|'end')` calls back from the connection's context, not this
    // one: bound, the request's listeners run in the request's span. (The answer's are not: binding
    // every listener Node adds to it cost more than anything that listens there needs.)
    context.bind(active, req);
    context.with(active, () => listener(req, res));
  };
}

/**
 * A CLIENT span for a call to `target`, a child of the current span, and its context (for the
 * headers that carry it); undefined while tracing is off. The caller ends it with `endCall`.
 */
export function startCall(method: string, target: URL | string, attributes: Attributes = {}): { span: Span; context: Context } | undefined {
  if (!tracingOn()) return undefined;
  const parent = context.active();
  const span = localTracer().startSpan(method, { kind: SpanKind.CLIENT }, parent);
  if (span.isRecording()) {
    const url = typeof target === 'string' ? new URL(target) : target;
    span.updateName(`${method} ${url.host}`);
    span.setAttributes({
      'http.request.method': method,
      'server.address': url.hostname,
      'server.port': Number(url.port) || undefined,
      'url.path': routeOf(url.pathname),
      ...attributes,
    });
  }
  return { span, context: trace.setSpan(parent, span) };
}

/** Ends a call's span with the answer's status (5xx a failure), or as failed with the error. */
export function endCall(call: { span: Span } | undefined, outcome: { status: number } | { error: unknown }): void {
  if (!call) return;
  if ('error' in outcome) {
    failSpan(call.span, outcome.error);
    return;
  }
  call.span.setAttribute('http.response.status_code', outcome.status);
  if (outcome.status >= 500) call.span.setStatus({ code: SpanStatusCode.ERROR });
  call.span.end();
}

/** The W3C `traceparent` of the current span, to keep with a record a later trace links to; null outside one. */
export function currentTraceparent(): string | null {
  if (!tracingOn()) return null;
  return withTraceHeaders<Record<string, string>>({}).traceparent ?? null;
}

/** Links the current span to the span a kept `traceparent` names (see currentTraceparent). */
export function linkToTraceparent(traceparent: string | null | undefined): void {
  const target = traceparent ? spanContextOf({ traceparent }) : undefined;
  if (target) trace.getActiveSpan()?.addLink({ context: target, attributes: { 'bookstore.link': 'checkout' } });
}

/** The span context the headers of a message or request carry, if any. */
export function spanContextOf(headers: Record<string, string> | undefined): SpanContext | undefined {
  const carried = headers ? trace.getSpanContext(contextFromHeaders(headers)) : undefined;
  return carried && isSpanContextValid(carried) ? carried : undefined;
}

export interface MessageLike {
  topic: string;
  headers?: Record<string, string>;
}

/**
 * PRODUCER spans for messages about to be published, one per message, each a child of the context
 * the message carries (for the outbox, the request that recorded it), with the message's headers
 * then carrying the span instead. `done` ends them all, failed with the error when there is one.
 */
export function startSends<M extends MessageLike>(service: string | undefined, system: string, messages: M[]): { messages: M[]; done(error?: unknown): void } {
  if (!tracingOn()) return { messages, done: () => undefined };
  const spans: Span[] = [];
  const sent = messages.map((message) => {
    const parent = contextFromHeaders(message.headers);
    const span = serviceTracer(service).startSpan(
      `send ${message.topic}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': system,
          'messaging.operation.type': 'send',
          'messaging.destination.name': message.topic,
          'messaging.message.id': message.headers?.eventId,
        },
      },
      parent,
    );
    spans.push(span);
    const headers: Record<string, string> = { ...message.headers };
    for (const name of TRACE_HEADERS) delete headers[name];
    propagation.inject(trace.setSpan(parent, span), headers);
    return { ...message, headers };
  });
  return {
    messages: sent,
    done(error?: unknown) {
      for (const span of spans) {
        if (error === undefined) span.end();
        else failSpan(span, error);
      }
    },
  };
}

/**
 * `work` inside the CONSUMER span of `service` for `messages` (see the module comment for its
 * parent and links); `work` alone while tracing is off.
 */
export function traceConsumption<T>(service: string | undefined, details: { system: string; group: string }, messages: MessageLike[], work: () => Promise<T>): Promise<T> {
  if (!tracingOn() || messages.length === 0) return work();
  const carried = messages.map((message) => spanContextOf(message.headers));
  const first = carried[0];
  const oneTrace = first !== undefined && carried.every((spanContext) => spanContext?.traceId === first.traceId);
  const parent = oneTrace ? trace.setSpanContext(ROOT_CONTEXT, first) : ROOT_CONTEXT;
  const topics = [...new Set(messages.map((message) => message.topic))];
  const links = messages.length > 1 ? carried.filter((spanContext): spanContext is SpanContext => spanContext !== undefined).map((spanContext) => ({ context: spanContext })) : [];
  return inSpan(
    `process ${topics.join(', ')}`,
    {
      service,
      kind: SpanKind.CONSUMER,
      parent,
      links,
      attributes: {
        'messaging.system': details.system,
        'messaging.operation.type': 'process',
        'messaging.destination.name': topics.join(', '),
        'messaging.consumer.group.name': details.group,
        'messaging.batch.message_count': messages.length > 1 ? messages.length : undefined,
      },
    },
    work,
  );
}

/** The ids of the current span for a log line (`trace_id`, `span_id`); nothing outside a span. */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  if (!tracingOn()) return {};
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
