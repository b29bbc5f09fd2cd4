/**
 * Tracing's own rules: the settings, which spans start a trace, the messaging spans' parents and
 * links, and a subgraph call shared by several callers. Spans are kept by an in-memory exporter.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_CONTEXT, SpanKind, context, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { createSubgraphFetcher } from '../../gateway/subgraph-fetcher';
import { ConfigError, loadConfig } from '../config';
import { LOCAL_ZIPKIN_ENDPOINT } from '../config/telemetry';
import { contextFromHeaders, inSpan, routeOf, startSends, traceConsumption, withTraceHeaders } from './spans';
import { traceInMemory } from '../../test/telemetry';

const { exporter, tracing } = traceInMemory();

afterAll(() => tracing?.shutdown());
beforeEach(() => exporter.reset());

const tracingOf = (env: Record<string, string>) => loadConfig(env, { embedded: true }).tracing;
const named = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
const serviceOf = (span: ReadableSpan) => span.resource.attributes['service.name'];

describe('tracing settings', () => {
  it('is off unless configured', () => {
    expect(tracingOf({}).exporter).toBeUndefined();
  });

  it('TRACING=on exports to the local Zipkin; the OpenTelemetry variables choose otherwise', () => {
    expect(tracingOf({ TRACING: 'on' }).exporter).toEqual({ kind: 'zipkin', endpoint: LOCAL_ZIPKIN_ENDPOINT });
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).exporter).toEqual({ kind: 'otlp', endpoint: 'http://collector:4318/v1/traces' });
    expect(tracingOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/traces' }).exporter).toEqual({ kind: 'otlp', endpoint: 'http://collector:4318/traces' });
    expect(tracingOf({ OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'http://zipkin:9411/api/v2/spans' }).exporter).toEqual({ kind: 'zipkin', endpoint: 'http://zipkin:9411/api/v2/spans' });
    expect(tracingOf({ TRACING: 'on', OTEL_TRACES_EXPORTER: 'console' }).exporter).toEqual({ kind: 'console', endpoint: undefined });
    expect(tracingOf({ TRACING: 'on', OTEL_SDK_DISABLED: 'true' }).exporter).toBeUndefined();
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).exporter).toBeUndefined();
  });

  it('reads the sampler and its ratio, and refuses what it cannot use', () => {
    expect(tracingOf({ TRACING: 'on', OTEL_TRACES_SAMPLER_ARG: '0.1' })).toMatchObject({ sampler: 'parentbased_traceidratio', ratio: 0.1 });
    expect(tracingOf({ OTEL_TRACES_SAMPLER: 'always_on' })).toMatchObject({ sampler: 'always_on', ratio: 1 });
    expect(() => tracingOf({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(ConfigError);
    expect(() => tracingOf({ OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(() => tracingOf({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(/OTEL_TRACES_EXPORTER/);
    expect(() => tracingOf({ TRACING: 'yes' })).toThrow(/TRACING/);
  });
});

describe('where a trace starts', () => {
  it('records a span with no parent only where work arrives (a request, a message)', async () => {
    await inSpan('background transaction', {}, async () => undefined);
    await inSpan('request', { service: 'book', kind: SpanKind.SERVER }, () => inSpan('its transaction', {}, async () => undefined));
    expect(named('background transaction')).toHaveLength(0);
    const [request] = named('request');
    const [inner] = named('its transaction');
    expect(inner.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    // A span whose parent is one of ours belongs to the parent's service.
    expect(serviceOf(inner)).toBe('book');
  });

  it('leaves out what a caller left out, and passes that decision on', async () => {
    const caller = '0af7651916cd43dd8448eb211c80319c';
    const parent = contextFromHeaders({ traceparent: `00-${caller}-b7ad6b7169203331-00` });
    const passedOn = await inSpan('request', { service: 'book', kind: SpanKind.SERVER, parent }, () =>
      inSpan('its transaction', {}, async () => withTraceHeaders<Record<string, string>>({})),
    );
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    expect(passedOn.traceparent).toMatch(new RegExp(`^00-${caller}-[0-9a-f]{16}-00$`));
  });

  it('names request spans by route, ids left out', () => {
    expect(routeOf('/api/books/9b2e7a4c-1f0d-4c3b-8a9e-5d6f7a8b9c0d/cover?size=large')).toBe('/api/books/{id}/cover');
    expect(routeOf('/api/orders/payment/42')).toBe('/api/orders/payment/{id}');
    expect(routeOf('/analytics/dashboard')).toBe('/analytics/dashboard');
  });
});

describe('messaging spans', () => {
  /** Headers of a message recorded inside a request span of `service`, as the outbox records them. */
  async function recordedIn(service: string): Promise<Record<string, string>> {
    return inSpan(`request of ${service}`, { service, kind: SpanKind.SERVER }, async () => withTraceHeaders<Record<string, string>>({ eventId: `event-of-${service}` }));
  }

  it('sends each message in a PRODUCER span under the request that recorded it, and the message carries that span', async () => {
    const headers = await recordedIn('payment');
    const sends = startSends('payment', 'kafka', [{ topic: 'payment-success', key: 'p1', value: '{}', headers }]);
    sends.done();
    const [send] = named('send payment-success');
    const [request] = named('request of payment');
    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(send.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(send.attributes).toMatchObject({ 'messaging.system': 'kafka', 'messaging.destination.name': 'payment-success', 'messaging.message.id': 'event-of-payment' });
    expect(sends.messages[0].headers?.traceparent).toContain(send.spanContext().spanId);
    expect(sends.messages[0].headers?.eventId).toBe('event-of-payment');
  });

  it('consumes one message as a child of its context, a batch of one trace as a child of the first with links to each', async () => {
    const headers = await recordedIn('order');
    const [request] = named('request of order');
    const again = context.with(trace.setSpan(ROOT_CONTEXT, trace.wrapSpanContext(request.spanContext())), () => withTraceHeaders<Record<string, string>>({}));
    await traceConsumption('analytics', { system: 'kafka', group: 'analytics-service' }, [{ topic: 'order-created', headers }], async () => undefined);
    await traceConsumption(
      'book',
      { system: 'kafka', group: 'book-service' },
      [
        { topic: 'order-created', headers },
        { topic: 'order-cancelled', headers: again },
      ],
      async () => undefined,
    );
    const [single] = named('process order-created');
    expect(serviceOf(single)).toBe('analytics');
    expect(single.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(single.links).toHaveLength(0);
    const [batch] = named('process order-created, order-cancelled');
    expect(batch.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(batch.links.map((link) => link.context.spanId)).toEqual([request.spanContext().spanId, request.spanContext().spanId]);
    expect(batch.attributes['messaging.batch.message_count']).toBe(2);
  });

  it('consumes a batch of several traces in a trace of its own, linked to each message', async () => {
    const first = await recordedIn('payment');
    const second = await recordedIn('order');
    const outcome = traceConsumption(
      'analytics',
      { system: 'in-process', group: 'analytics-service' },
      [
        { topic: 'payment-success', headers: first },
        { topic: 'payment-success', headers: second },
      ],
      () => Promise.reject(new Error('database down')),
    );
    await expect(outcome).rejects.toThrow('database down');
    const [batch] = named('process payment-success');
    expect(batch.parentSpanContext).toBeUndefined();
    expect(batch.links.map((link) => link.context.traceId).sort()).toEqual(
      [...named('request of payment'), ...named('request of order')].map((span) => span.spanContext().traceId).sort(),
    );
    expect(batch.status.code).toBe(2);
  });
});

describe('a subgraph call shared by several callers', () => {
  it('sends one call carrying the first caller’s span, and links every caller’s span to it', async () => {
    let calls = 0;
    const traceparents: string[] = [];
    const server = http.createServer((req, res) => {
      calls += 1;
      traceparents.push(String(req.headers.traceparent));
      req.resume();
      req.on('end', () => res.end('{"data":{"ok":true}}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    const fetcher = createSubgraphFetcher();
    try {
      const body = JSON.stringify({ query: 'query { ok }' });
      const ask = (caller: string) =>
        inSpan(caller, { service: 'gateway', kind: SpanKind.SERVER }, async () =>
          (await fetcher.fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json(),
        );
      await expect(Promise.all([ask('first'), ask('second')])).resolves.toEqual([{ data: { ok: true } }, { data: { ok: true } }]);
    } finally {
      fetcher.close();
      server.close();
    }
    expect(calls).toBe(1);
    const clients = exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.CLIENT);
    expect(clients).toHaveLength(2);
    const [leader] = clients.filter((span) => traceparents[0].includes(span.spanContext().spanId));
    const [joiner] = clients.filter((span) => span !== leader);
    expect(joiner.attributes['bookstore.deduplicated']).toBe(true);
    expect(joiner.links.map((link) => link.context.spanId)).toEqual([leader.spanContext().spanId]);
    expect(leader.links.map((link) => link.context.spanId)).toEqual([joiner.spanContext().spanId]);
    expect(named('first')[0].spanContext().traceId).not.toBe(named('second')[0].spanContext().traceId);
  });
});
