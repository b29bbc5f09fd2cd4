/**
 * One checkout, traced (platform/telemetry): on the run's own infrastructure (the in-process bus, or
 * Kafka when KAFKA_BROKERS is set), with the spans kept by an in-memory exporter.
 *
 * - The shop's checkout carries a `traceparent`: the gateway starts a trace of its own linked to it
 *   (a client does not choose to be traced), which its call to the payment service, the payment's
 *   transaction, the outbox relay's `send payment-created` and analytics' consumer all continue. A
 *   proxy that TRUST_PROXY names is trusted with its context: the gateway continues its trace.
 * - Stripe's `payment_intent.succeeded` webhook, through the gateway, starts a trace of its own that
 *   links to the checkout's; in it the relay sends `payment-success`, which the order service and
 *   analytics consume; the order service sends `order-created`, which the book service consumes.
 * - The log lines written while an event is applied carry that trace's `trace_id` and `span_id`.
 * - A GraphQL query through the gateway: @apollo/gateway's request, plan and fetch spans, and each
 *   subgraph's request as a child of the gateway's call to it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import request from 'supertest';
import { graphqlHalf } from '../gateway/graphql';
import { createLogger } from '../platform/logger';
import { createBook } from './commerce';
import { startGateway, type RunningGateway } from './gateway';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from './harness';
import { traceInMemory } from './telemetry';

const { exporter, tracing } = traceInMemory();
const logLines: Record<string, unknown>[] = [];
let stack: Stack;
let gateway: RunningGateway;

beforeAll(async () => {
  const lines = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  stack = await startStack({
    services: ['book', 'order', 'payment', 'analytics'],
    logger: createLogger('debug', {}, lines),
    stripeWebhookUrl: () => `${gateway.url}/api/payments/webhook`,
  });
  const logger = createLogger(stack.config.logLevel);
  gateway = await startGateway(stack.config, { logger, mountGraphql: graphqlHalf({ config: stack.config, logger }) });
}, 60_000);
afterAll(async () => {
  await gateway?.stop();
  await stack?.stop();
  await tracing?.shutdown();
});

const serviceOf = (span: ReadableSpan) => span.resource.attributes['service.name'];
const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const traceOf = (span: ReadableSpan) => span.spanContext().traceId;
const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((span) => traceOf(span) === traceId);

/** The one span of `spans` that matches; fails naming what was there otherwise. */
function only(spans: ReadableSpan[], what: { name: string; service: string; kind: SpanKind }, where: (span: ReadableSpan) => boolean = () => true): ReadableSpan {
  const found = spans.filter((span) => span.name === what.name && serviceOf(span) === what.service && span.kind === what.kind && where(span));
  if (found.length !== 1) {
    const seen = spans.map((span) => `${String(serviceOf(span))} ${span.name} ${span.kind}`).join('\n');
    throw new Error(`expected one ${what.service} span "${what.name}", found ${found.length} among:\n${seen}`);
  }
  return found[0];
}

/** Whether `ancestor` is `span`'s parent, its parent's parent, and so on, within `spans`. */
function descendsFrom(span: ReadableSpan, ancestor: ReadableSpan, spans: ReadableSpan[]): boolean {
  const byId = new Map(spans.map((each) => [idOf(each), each]));
  for (let parentId = span.parentSpanContext?.spanId; parentId; parentId = byId.get(parentId)?.parentSpanContext?.spanId) {
    if (parentId === idOf(ancestor)) return true;
  }
  return false;
}

/** The trace the gateway started for a request that carried `clientSpan`, linked to it. */
async function gatewayTraceLinkedTo(clientSpan: string): Promise<string> {
  const atGateway = await waitFor(
    () =>
      exporter.getFinishedSpans().find((span) => serviceOf(span) === 'gateway' && span.kind === SpanKind.SERVER && span.links.some((link) => link.context.spanId === clientSpan)),
    { what: "the gateway's request span linked to the client's" },
  );
  expect(atGateway.parentSpanContext).toBeUndefined();
  return traceOf(atGateway);
}

/**
 * A consumer's span continues the message's: its child when it handled that message alone, and
 * linked to it (and still in its trace) when it handled a batch.
 */
function continues(consumer: ReadableSpan, send: ReadableSpan): boolean {
  if (consumer.parentSpanContext?.spanId === idOf(send)) return true;
  return traceOf(consumer) === traceOf(send) && consumer.links.some((link) => link.context.spanId === idOf(send));
}

describe('a checkout traced from the shop to analytics', () => {
  it("starts the gateway's own trace, linked to the shop's, and keeps it through payment, the outbox relay and the consumers; the webhook trace links to it", async () => {
    const admin = await adminSession(stack);
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, admin.bearer, `Traced ${randomUUID().slice(0, 8)}`, 14.5, 5);

    const shopTrace = randomBytes(16).toString('hex');
    const shopSpan = randomBytes(8).toString('hex');
    const res = await request(gateway.url)
      .post('/api/payments/checkout')
      .set('Authorization', buyer.bearer)
      .set('traceparent', `00-${shopTrace}-${shopSpan}-01`)
      .send({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 2 }] });
    expect(res.status).toBe(200);
    await stack.stripe!.confirm(res.body.paymentIntentId);
    const order = await waitFor(
      async () => {
        const answer = await request(gateway.url).get(`/api/orders/payment/${res.body.paymentId}`).set('Authorization', buyer.bearer);
        return answer.status === 200 ? (answer.body as { orderId: string }) : undefined;
      },
      { what: 'the order of the paid checkout' },
    );

    // The checkout's trace, from the gateway's span (linked to the shop's) to analytics' consumer.
    const checkoutTrace = await gatewayTraceLinkedTo(shopSpan);
    expect(checkoutTrace).not.toBe(shopTrace);
    const checkoutSpans = await waitFor(
      () => {
        const spans = spansOf(checkoutTrace);
        return spans.some((span) => span.name === 'process payment-created' && serviceOf(span) === 'analytics') ? spans : undefined;
      },
      { what: 'analytics consuming payment-created in the checkout trace' },
    );
    expect(spansOf(shopTrace)).toEqual([]);
    const atGateway = only(checkoutSpans, { name: 'POST /api/payments/checkout', service: 'gateway', kind: SpanKind.SERVER });
    expect(atGateway.parentSpanContext).toBeUndefined();
    expect(atGateway.links.map((link) => link.context)).toEqual([expect.objectContaining({ traceId: shopTrace, spanId: shopSpan })]);
    const proxied = only(checkoutSpans, { name: `POST ${new URL(stack.urls.payment).host}`, service: 'gateway', kind: SpanKind.CLIENT });
    expect(proxied.parentSpanContext?.spanId).toBe(idOf(atGateway));
    const atPayment = only(checkoutSpans, { name: 'POST /api/payments/checkout', service: 'payment', kind: SpanKind.SERVER });
    expect(atPayment.parentSpanContext?.spanId).toBe(idOf(proxied));
    const created = only(checkoutSpans, { name: 'send payment-created', service: 'payment', kind: SpanKind.PRODUCER });
    expect(descendsFrom(created, atPayment, checkoutSpans)).toBe(true);
    expect(created.attributes['messaging.message.id']).toEqual(expect.any(String));
    expect(continues(only(checkoutSpans, { name: 'process payment-created', service: 'analytics', kind: SpanKind.CONSUMER }), created)).toBe(true);

    // The webhook's trace: its own root at the gateway, linked to the checkout.
    const linked = await waitFor(
      () => exporter.getFinishedSpans().find((span) => serviceOf(span) === 'payment' && span.links.some((link) => link.context.traceId === checkoutTrace)),
      {
        what: 'a payment span linked to the checkout trace',
      },
    );
    const webhookTrace = traceOf(linked);
    expect(webhookTrace).not.toBe(checkoutTrace);
    const webhookSpans = await waitFor(
      () => {
        const spans = spansOf(webhookTrace);
        const consumed = spans.filter((span) => span.kind === SpanKind.CONSUMER).map((span) => `${String(serviceOf(span))} ${span.name}`);
        return consumed.some((name) => name === 'book process order-created') && consumed.some((name) => name.startsWith('analytics ') && name.includes('payment-success'))
          ? spans
          : undefined;
      },
      { what: 'analytics consuming payment-success and the book service order-created in the webhook trace' },
    );
    const hook = only(webhookSpans, { name: 'POST /api/payments/webhook', service: 'gateway', kind: SpanKind.SERVER });
    expect(hook.parentSpanContext).toBeUndefined();
    const hookAtPayment = only(webhookSpans, { name: 'POST /api/payments/webhook', service: 'payment', kind: SpanKind.SERVER });
    expect(descendsFrom(hookAtPayment, hook, webhookSpans)).toBe(true);
    expect(descendsFrom(linked, hookAtPayment, webhookSpans)).toBe(true);
    const success = only(webhookSpans, { name: 'send payment-success', service: 'payment', kind: SpanKind.PRODUCER });
    expect(descendsFrom(success, hookAtPayment, webhookSpans)).toBe(true);
    // The order service consumes payment-success twice: its orders, and its outbound webhooks' fan-out (a group of its own).
    const isFanOut = (span: ReadableSpan) => String(span.attributes['messaging.consumer.group.name']).endsWith('.webhooks');
    const ordered = only(webhookSpans, { name: 'process payment-success', service: 'order', kind: SpanKind.CONSUMER }, (span) => !isFanOut(span));
    expect(continues(ordered, success)).toBe(true);
    expect(continues(only(webhookSpans, { name: 'process payment-success', service: 'order', kind: SpanKind.CONSUMER }, isFanOut), success)).toBe(true);
    const orderCreated = only(webhookSpans, { name: 'send order-created', service: 'order', kind: SpanKind.PRODUCER });
    expect(descendsFrom(orderCreated, ordered, webhookSpans)).toBe(true);
    const inAnalytics = webhookSpans.filter((span) => serviceOf(span) === 'analytics' && span.kind === SpanKind.CONSUMER);
    expect(inAnalytics.some((span) => continues(span, success))).toBe(true);
    expect(continues(only(webhookSpans, { name: 'process order-created', service: 'book', kind: SpanKind.CONSUMER }), orderCreated)).toBe(true);
    // The order service's transaction (the order written) is inside its consumer's span.
    expect(webhookSpans.some((span) => serviceOf(span) === 'order' && span.name.startsWith('transaction ') && descendsFrom(span, ordered, webhookSpans))).toBe(true);

    // Log lines written while the order consumer applied payment-success carry its trace.
    const applied = logLines.filter((line) => line.trace_id === webhookTrace && line.service === 'order');
    expect(applied.length).toBeGreaterThan(0);
    expect(applied.every((line) => typeof line.span_id === 'string' && typeof line.eventId === 'string')).toBe(true);
    expect(order.orderId).toEqual(expect.any(String));
  });

  it('continues the trace of a proxy TRUST_PROXY names, and passes on neither the context nor the trace of a client it does not trust', async () => {
    const trusting = await startGateway({ ...stack.config, trustProxy: { ...stack.config.trustProxy, frontProxies: ['loopback'] } }, { logger: createLogger('silent') });
    try {
      const proxyTrace = randomBytes(16).toString('hex');
      const proxySpan = randomBytes(8).toString('hex');
      const res = await request(trusting.url).get('/api/books/').set('traceparent', `00-${proxyTrace}-${proxySpan}-01`);
      expect(res.status).toBe(200);
      const spans = await waitFor(
        () => {
          const found = spansOf(proxyTrace);
          return found.some((span) => serviceOf(span) === 'book' && span.kind === SpanKind.SERVER) ? found : undefined;
        },
        { what: "the book service's request span in the proxy's trace" },
      );
      const atGateway = only(spans, { name: 'GET /api/books/', service: 'gateway', kind: SpanKind.SERVER });
      expect(atGateway.parentSpanContext?.spanId).toBe(proxySpan);
      expect(atGateway.links).toEqual([]);
    } finally {
      await trusting.stop();
    }

    const clientTrace = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const res = await request(gateway.url).get('/api/books/').set('traceparent', `00-${clientTrace}-${clientSpan}-01`).set('tracestate', 'chosen=by-the-client');
    expect(res.status).toBe(200);
    const ownTrace = await gatewayTraceLinkedTo(clientSpan);
    const atBook = await waitFor(() => spansOf(ownTrace).find((span) => serviceOf(span) === 'book' && span.kind === SpanKind.SERVER), {
      what: "the book service's request span in the gateway's trace",
    });
    expect(atBook.spanContext().traceState).toBeUndefined();
    expect(spansOf(clientTrace)).toEqual([]);
  });

  // The best sellers include the sale of the test above, so the query needs both subgraphs.
  it('continues a GraphQL query through the gateway’s plan into both subgraphs it needs', async () => {
    const admin = await adminSession(stack);
    const shopSpan = randomBytes(8).toString('hex');
    const res = await request(gateway.url)
      .post('/graphql')
      .set('Authorization', admin.bearer)
      .set('traceparent', `00-${randomBytes(16).toString('hex')}-${shopSpan}-01`)
      .send({ query: '{ bookReport { topBooks { bookId quantitySold book { id title } } } }' });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const queryTrace = await gatewayTraceLinkedTo(shopSpan);
    const spans = await waitFor(
      () => {
        const found = spansOf(queryTrace);
        return found.filter((span) => span.kind === SpanKind.SERVER && serviceOf(span) !== 'gateway').length >= 2 ? found : undefined;
      },
      { what: 'both subgraphs’ request spans in the query’s trace' },
    );
    const atGateway = only(spans, { name: 'POST /graphql', service: 'gateway', kind: SpanKind.SERVER });
    // @apollo/gateway's own spans, under the gateway's request.
    const planned = spans.filter((span) => span.name === 'gateway.request' && serviceOf(span) === 'gateway');
    expect(planned).toHaveLength(1);
    expect(descendsFrom(planned[0], atGateway, spans)).toBe(true);
    for (const subgraph of ['analytics', 'book']) {
      const served = only(spans, { name: 'POST /graphql', service: subgraph, kind: SpanKind.SERVER });
      const call = spans.find((span) => idOf(span) === served.parentSpanContext?.spanId);
      expect(call?.kind).toBe(SpanKind.CLIENT);
      expect(serviceOf(call!)).toBe('gateway');
      expect(descendsFrom(call!, planned[0], spans)).toBe(true);
    }
  });
});
