/**
 * Loaded first by every process (platform/run.ts, scripts/start.ts import it before anything else):
 * with tracing configured, the OpenTelemetry instrumentations of the libraries we do not own are
 * registered here, before those libraries are required, since they patch a module as it loads.
 * platform/run.ts then turns tracing on with the process's service name (startTracing).
 *
 * - express: a span per route handler, under the request's SERVER span (middleware and routers
 *   left out: a dozen spans of microseconds each would bury the ones that matter).
 * - graphql: parse, validate and execute spans in every subgraph (trivial field resolvers left out).
 * - mysql2: a span per query on MySQL/MariaDB, under the transaction's span.
 * - http: a CLIENT span for outgoing calls our own code does not trace (the Stripe SDK, S3). Incoming
 *   requests, our calls to other services and subgraph fetches are traced by our own hops
 *   (platform/telemetry/spans.ts), which work the same under the test runner, where module patching
 *   does not; a call that already carries `traceparent` is one of those and is left alone.
 *
 * Two instrumentations are not registered, on purpose. kafkajs: its producer span would be a child
 * of the relay's loop, and the context it writes into each message would replace the one our outbox
 * stored with the event, which is the request that caused it; our relay and consumers make the
 * messaging spans instead, with the same conventions. pino: the logger already adds `trace_id` and
 * `span_id` to every line (platform/logger.ts), in tests too.
 */
import type { RequestOptions } from 'node:http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { MySQL2Instrumentation } from '@opentelemetry/instrumentation-mysql2';
import { loadTelemetryConfig } from '../config';

function carriesTraceContext(options: RequestOptions): boolean {
  const headers = options.headers;
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) return false;
  return Object.keys(headers).some((name) => name.toLowerCase() === 'traceparent');
}

function register(): void {
  let configured: boolean;
  try {
    configured = loadTelemetryConfig().tracing.exporter !== undefined;
  } catch {
    // A bad setting is reported, with its name, when the process loads its whole configuration.
    return;
  }
  if (!configured) return;
  registerInstrumentations({
    instrumentations: [
      new HttpInstrumentation({ disableIncomingRequestInstrumentation: true, ignoreOutgoingRequestHook: carriesTraceContext }),
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
      new GraphQLInstrumentation({ ignoreTrivialResolveSpans: true, mergeItems: true }),
      new MySQL2Instrumentation(),
    ],
  });
}

register();
