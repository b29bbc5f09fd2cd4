/**
 * Tracing (platform/telemetry): off unless configured. The OpenTelemetry standard variables turn it
 * on and shape it; `TRACING=on` is the short switch for the embedded default, which then exports
 * to a Zipkin on this machine (`npm run zipkin start`, scripts/zipkin.sh).
 *
 * - `OTEL_SDK_DISABLED=true`: off, whatever else is set.
 * - `OTEL_TRACES_EXPORTER`: `otlp` (OTLP over HTTP/JSON), `zipkin`, `console` or `none`. Unset, it
 *   follows the endpoint that is set: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as given) or
 *   `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended), else `OTEL_EXPORTER_ZIPKIN_ENDPOINT`,
 *   else, with `TRACING=on`, Zipkin at http://127.0.0.1:9411/api/v2/spans.
 * - `OTEL_TRACES_SAMPLER` (default `parentbased_traceidratio`) and `OTEL_TRACES_SAMPLER_ARG` (the
 *   ratio, default 1): a request that arrives with a sampled `traceparent` is traced whatever the
 *   ratio, so a trace is never cut in half between services.
 * - `OTEL_SERVICE_NAME`: the name a lone process reports (default: the service it runs).
 */
import { ConfigError, type EnvReader } from './env';

export type TraceExporterKind = 'otlp' | 'zipkin' | 'console';

export const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type SamplerKind = (typeof SAMPLERS)[number];

export const LOCAL_ZIPKIN_ENDPOINT = 'http://127.0.0.1:9411/api/v2/spans';

export interface TracingConfig {
  /** Where spans go; undefined when tracing is off. */
  exporter: { kind: TraceExporterKind; endpoint: string | undefined } | undefined;
  sampler: SamplerKind;
  /** The share of new traces kept by the ratio samplers, 0 to 1. */
  ratio: number;
  serviceName: string | undefined;
}

export interface TelemetryConfig {
  tracing: TracingConfig;
}

function readExporter(env: EnvReader): TracingConfig['exporter'] {
  if (env.bool('OTEL_SDK_DISABLED', false)) return undefined;
  const tracesEndpoint = env.read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const baseEndpoint = env.read('OTEL_EXPORTER_OTLP_ENDPOINT');
  const otlpEndpoint = tracesEndpoint ?? (baseEndpoint ? `${baseEndpoint.replace(/\/+$/, '')}/v1/traces` : undefined);
  const zipkinEndpoint = env.read('OTEL_EXPORTER_ZIPKIN_ENDPOINT');
  const tracing = env.read('TRACING')?.toLowerCase() ?? 'off';
  if (tracing !== 'on' && tracing !== 'off') throw new ConfigError(`TRACING must be on or off, got "${tracing}"`);
  const switchedOn = tracing === 'on';
  const named = env.read('OTEL_TRACES_EXPORTER')?.toLowerCase();
  switch (named) {
    case 'none':
      return undefined;
    case 'otlp':
      return { kind: 'otlp', endpoint: otlpEndpoint };
    case 'zipkin':
      return { kind: 'zipkin', endpoint: zipkinEndpoint ?? LOCAL_ZIPKIN_ENDPOINT };
    case 'console':
      return { kind: 'console', endpoint: undefined };
    case undefined:
      if (otlpEndpoint) return { kind: 'otlp', endpoint: otlpEndpoint };
      if (zipkinEndpoint || switchedOn) return { kind: 'zipkin', endpoint: zipkinEndpoint ?? LOCAL_ZIPKIN_ENDPOINT };
      return undefined;
    default:
      throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp, zipkin, console or none, got "${named}"`);
  }
}

export function readTelemetry(env: EnvReader): TelemetryConfig {
  const sampler = (env.read('OTEL_TRACES_SAMPLER')?.toLowerCase() ?? 'parentbased_traceidratio') as SamplerKind;
  if (!SAMPLERS.includes(sampler)) throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got "${sampler}"`);
  const rawRatio = env.read('OTEL_TRACES_SAMPLER_ARG');
  const ratio = rawRatio === undefined ? 1 : Number(rawRatio);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${rawRatio}"`);
  return { tracing: { exporter: readExporter(env), sampler, ratio, serviceName: env.read('OTEL_SERVICE_NAME') } };
}
