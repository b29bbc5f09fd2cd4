/**
 * Who decides that a request is traced (platform/telemetry): the gateway's own sampler, here at a
 * ratio of 0, whatever a client's `traceparent` says; only a proxy that TRUST_PROXY names is
 * followed, its sampled context recorded through the gateway and the service behind it.
 */
import { randomBytes } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import request from 'supertest';
import { createLogger } from '../platform/logger';
import { startGateway, type RunningGateway } from './gateway';
import { startStack, waitFor, type Stack } from './harness';
import { traceInMemory } from './telemetry';

const { exporter, tracing } = traceInMemory(0);
let stack: Stack;
let gateway: RunningGateway;
let trusting: RunningGateway;

beforeAll(async () => {
  stack = await startStack();
  const logger = createLogger('silent');
  gateway = await startGateway(stack.config, { logger });
  trusting = await startGateway({ ...stack.config, trustProxy: { ...stack.config.trustProxy, frontProxies: ['loopback'] } }, { logger });
}, 60_000);
afterAll(async () => {
  await trusting?.stop();
  await gateway?.stop();
  await stack?.stop();
  await tracing?.shutdown();
});

const serviceOf = (span: ReadableSpan) => span.resource.attributes['service.name'];
const sampledParent = () => ({ trace: randomBytes(16).toString('hex'), span: randomBytes(8).toString('hex') });

describe('tracing at a sampling ratio of 0', () => {
  it("records nothing for a client's sampled traceparent, and a trusted proxy's through the gateway and the service behind it", async () => {
    const client = sampledParent();
    const chosen = await request(gateway.url).get('/auth/.well-known/jwks.json').set('traceparent', `00-${client.trace}-${client.span}-01`);
    expect(chosen.status).toBe(200);

    const proxy = sampledParent();
    const followed = await request(trusting.url).get('/auth/.well-known/jwks.json').set('traceparent', `00-${proxy.trace}-${proxy.span}-01`);
    expect(followed.status).toBe(200);
    const proxied = await waitFor(
      () => {
        const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === proxy.trace);
        return spans.some((span) => serviceOf(span) === 'auth' && span.kind === SpanKind.SERVER) ? spans : undefined;
      },
      { what: "the auth service's request span in the trusted proxy's trace" },
    );
    expect(proxied.find((span) => serviceOf(span) === 'gateway' && span.kind === SpanKind.SERVER)?.parentSpanContext?.spanId).toBe(proxy.span);

    // Everything recorded belongs to the proxy's trace: the client's request left no span anywhere.
    const elsewhere = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId !== proxy.trace);
    expect(elsewhere.map((span) => `${String(serviceOf(span))} ${span.name} in trace ${span.spanContext().traceId}`)).toEqual([]);
  });
});
