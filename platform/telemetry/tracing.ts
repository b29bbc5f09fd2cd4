/**
 * OpenTelemetry tracing, set up in one place for every process: the W3C trace-context propagator,
 * an AsyncLocalStorage context manager, a sampler from the configuration (parent-based ratio by
 * default), and an exporter (OTLP over HTTP, Zipkin, the console, or one a test hands in). Off unless
 * configured (platform/config/telemetry.ts): then every span call below is the API's no-op.
 *
 * Spans carry the service that made them as their resource's `service.name`. A lone service's
 * process is that service; the embedded default runs all six and the gateway in one process, so
 * each service gets a provider of its own (`serviceTracer`), and a span started by a library
 * (@apollo/gateway, an instrumentation) is put under the service of the span it is a child of. A
 * trace viewer then shows the gateway, payment, order and analytics as they are, whichever way the
 * system runs.
 */
import {
  SpanKind,
  TraceFlags,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerProvider as TracerProviderApi,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  SamplingDecision,
  TracerProvider,
  type ReadableSpan,
  type Sampler,
  type SamplingResult,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ZipkinExporter } from '@opentelemetry/exporter-zipkin';
import type { TracingConfig } from '../config';

/** The instrumentation scope of the spans this project makes itself. */
const SCOPE = 'bookstore';

/**
 * A trace begins where work arrives: a request (SERVER), a consumed message (CONSUMER) or an event
 * published (PRODUCER). A span of another kind with no parent (a background transaction, a key
 * fetch, a schema parsed at start) is not recorded, so the viewer lists what a person looks for.
 * Everything else is the configured sampler's decision.
 */
class EntryPointSampler implements Sampler {
  constructor(private readonly inner: Sampler) {}

  shouldSample(parent: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (!trace.getSpanContext(parent) && kind !== SpanKind.SERVER && kind !== SpanKind.CONSUMER && kind !== SpanKind.PRODUCER) {
      return { decision: SamplingDecision.NOT_RECORD };
    }
    return this.inner.shouldSample(parent, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `EntryPointSampler{${this.inner.toString()}}`;
  }
}

function samplerOf(config: Pick<TracingConfig, 'sampler' | 'ratio'>): Sampler {
  return new EntryPointSampler(configuredSampler(config));
}

function configuredSampler(config: Pick<TracingConfig, 'sampler' | 'ratio'>): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.ratio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

function exporterOf(exporter: NonNullable<TracingConfig['exporter']>): SpanExporter {
  switch (exporter.kind) {
    case 'otlp':
      return new OTLPTraceExporter(exporter.endpoint ? { url: exporter.endpoint } : {});
    case 'zipkin':
      return new ZipkinExporter({ url: exporter.endpoint });
    case 'console':
      return new ConsoleSpanExporter();
  }
}

/** `startActiveSpan` in its three forms, on a tracer's `startSpan`. */
function startActive<F extends (span: Span) => unknown>(tracer: Pick<Tracer, 'startSpan'>, name: string, rest: unknown[]): ReturnType<F> {
  const work = rest.pop() as (span: Span) => ReturnType<F>;
  const [options, parent = context.active()] = rest as [SpanOptions | undefined, Context | undefined];
  const span = tracer.startSpan(name, options, parent);
  return context.with(trace.setSpan(parent, span), work, undefined, span);
}

/**
 * Under a parent-based sampler, a child of a span the sampler left out is left out too: this tracer
 * answers it with the parent's context at once, without the SDK's sampling, ids and bookkeeping.
 * At 10 % sampling nine requests in ten take only this path, through every span they would have
 * had (the gateway's plan and fetches, each transaction), and still pass the decision on.
 */
class SampledOutShortcut implements Tracer {
  constructor(private readonly sdk: Tracer) {}

  startSpan(name: string, options?: SpanOptions, parent: Context = context.active()): Span {
    return sampledOut(parent) ?? this.sdk.startSpan(name, options, parent);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    // Under the current span, left out: that span stays current, with no new context to enter.
    if (rest.length < 3) {
      const left = sampledOut(context.active());
      if (left) return (rest[rest.length - 1] as (span: Span) => ReturnType<F>)(left);
    }
    return startActive<F>(this, name, rest);
  }
}

/**
 * The span a child of `parent` is when the sampler left `parent` out: the parent's own (a span that
 * records nothing; ending it does nothing), so nothing is allocated for it.
 */
function sampledOut(parent: Context): Span | undefined {
  const span = trace.getSpan(parent);
  if (!span || span.isRecording()) return undefined;
  const spanContext = span.spanContext();
  return (spanContext.traceFlags & TraceFlags.SAMPLED) === 0 ? span : undefined;
}

class Tracing {
  private readonly providers = new Map<string, TracerProvider>();
  private readonly tracers = new Map<string, Tracer>();

  constructor(
    private readonly processor: SpanProcessor,
    private readonly sampler: Sampler,
    /** Whether the sampler follows the parent's decision (the shortcut above applies). */
    private readonly parentBased: boolean,
    /** The service of a span that has no parent of ours: the process's own. */
    readonly defaultService: string,
    /** Whether the process runs several services, each reporting its own name. */
    readonly perService: boolean,
  ) {}

  provider(service: string): TracerProvider {
    let provider = this.providers.get(service);
    if (!provider) {
      provider = new TracerProvider({
        resource: resourceFromAttributes({ 'service.name': service, 'service.namespace': 'bookstore' }),
        sampler: this.sampler,
        spanProcessors: [this.processor],
      });
      this.providers.set(service, provider);
    }
    return provider;
  }

  tracer(service: string, scope = SCOPE, version?: string): Tracer {
    // Our own scope is asked for at every span: its key is the service name alone.
    const key = scope === SCOPE && version === undefined ? service : `${service}\n${scope}\n${version ?? ''}`;
    let tracer = this.tracers.get(key);
    if (!tracer) {
      const sdk = this.provider(service).getTracer(scope, version);
      tracer = this.parentBased ? new SampledOutShortcut(sdk) : sdk;
      this.tracers.set(key, tracer);
    }
    return tracer;
  }

  forceFlush(): Promise<void> {
    return this.processor.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.processor.shutdown();
  }
}

let active: Tracing | undefined;

/** The service a span was made for, when it is one of ours (a sampled-out span has none). */
function serviceOf(span: Span | undefined): string | undefined {
  const resource = (span as Partial<ReadableSpan> | undefined)?.resource;
  const name = resource?.attributes['service.name'];
  return typeof name === 'string' ? name : undefined;
}

/** A library's tracer: each span goes to the provider of its parent's service (see the module comment). */
class RoutingTracer implements Tracer {
  /** This scope's tracer per service, looked up without building a key per span. */
  private readonly byService = new Map<string, Tracer>();

  constructor(
    private readonly tracing: Tracing,
    private readonly scope: string,
    private readonly version: string | undefined,
  ) {}

  startSpan(name: string, options?: SpanOptions, parent: Context = context.active()): Span {
    const service = serviceOf(trace.getSpan(parent)) ?? this.tracing.defaultService;
    let tracer = this.byService.get(service);
    if (!tracer) {
      tracer = this.tracing.tracer(service, this.scope, this.version);
      this.byService.set(service, tracer);
    }
    return tracer.startSpan(name, options, parent);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    return startActive<F>(this, name, rest);
  }
}

class RoutingProvider implements TracerProviderApi {
  constructor(private readonly tracing: Tracing) {}

  getTracer(name: string, version?: string): Tracer {
    return new RoutingTracer(this.tracing, name, version);
  }
}

export interface TracingOptions {
  config: TracingConfig;
  /** The process's own service: the name of spans no service of ours started (`OTEL_SERVICE_NAME` wins). */
  service: string;
  /** Instead of the configured exporter (tests hand an in-memory one). */
  exporter?: SpanExporter;
  /** Export each span as it ends rather than in batches (tests, which read spans at once). */
  exportEachSpan?: boolean;
  /** The process runs several services (the embedded default, tests): each reports its own name. */
  perService?: boolean;
}

export interface TracingHandle {
  /** Exports what has ended and not been exported yet. */
  flush(): Promise<void>;
  /** Exports what is left and turns tracing off for the process. */
  shutdown(): Promise<void>;
}

/**
 * Turns tracing on for the process, with `config`'s exporter (or `exporter`); undefined, and nothing
 * changed, when the configuration leaves it off and no exporter is handed in. One call per process.
 */
export function startTracing(options: TracingOptions): TracingHandle | undefined {
  if (active) throw new Error('tracing is already on in this process');
  const configured = options.config.exporter;
  const exporter = options.exporter ?? (configured ? exporterOf(configured) : undefined);
  if (!exporter) return undefined;
  const processor = options.exportEachSpan ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter });
  const tracing = new Tracing(
    processor,
    samplerOf(options.config),
    options.config.sampler.startsWith('parentbased_'),
    options.config.serviceName ?? options.service,
    options.perService ?? false,
  );
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new RoutingProvider(tracing));
  active = tracing;
  return {
    flush: () => tracing.forceFlush(),
    shutdown: async () => {
      if (active !== tracing) return;
      active = undefined;
      await tracing.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** Whether spans are being made (the hot paths skip their span work otherwise). */
export function tracingOn(): boolean {
  return active !== undefined;
}

/**
 * The tracer of a service of ours (undefined: the process's own). Asked at each span, not kept: tracing may be turned on after the
 * module that traces was loaded. The API's no-op tracer while tracing is off.
 */
export function serviceTracer(service: string | undefined): Tracer {
  if (active) return active.tracer(active.perService && service ? service : active.defaultService);
  return trace.getTracer(SCOPE);
}
