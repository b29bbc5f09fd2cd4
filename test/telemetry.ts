/** Tracing on for a test file, every span kept by an in-memory exporter as it ends (platform/telemetry). */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { startTracing, type TracingHandle } from '../platform/telemetry/tracing';

export function traceInMemory(): { exporter: InMemorySpanExporter; tracing: TracingHandle | undefined } {
  const exporter = new InMemorySpanExporter();
  const tracing = startTracing({
    config: { exporter: undefined, sampler: 'parentbased_traceidratio', ratio: 1, serviceName: undefined },
    service: 'test',
    exporter,
    exportEachSpan: true,
    perService: true,
  });
  return { exporter, tracing };
}
