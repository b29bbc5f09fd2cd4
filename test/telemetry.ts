/** Tracing on for a test file, every span kept by an in-memory exporter as it ends (platform/telemetry). */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { startTracing, type TracingHandle } from '../platform/telemetry/tracing';

/** `ratio`: the share of new traces the (parent-based) sampler records, every one unless told. */
export function traceInMemory(ratio = 1): { exporter: InMemorySpanExporter; tracing: TracingHandle | undefined } {
  const exporter = new InMemorySpanExporter();
  const tracing = startTracing({
    config: { exporter: undefined, sampler: 'parentbased_traceidratio', ratio, serviceName: undefined },
    service: 'test',
    exporter,
    exportEachSpan: true,
    perService: true,
  });
  return { exporter, tracing };
}
