import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createServiceApp } from '../rest-compat/app';
import { createBook, type CatalogueBook } from '../test/commerce';
import { adminSession, notUnderContract, registeredUser, startStack, type Stack } from '../test/harness';
import { captureLog, type LogCapture } from '../test/hostile';
import { PaymentService } from '../subgraphs/payment/service';
import { deliver } from './events/bus';
import { callService } from './http';
import { currentContext, runInContext, type RequestContext } from './request-context';

const entries = (log: LogCapture) => log.lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe('the request context of a service app', () => {
  const log = captureLog('info');
  const received: http.IncomingHttpHeaders[] = [];
  let downstream: http.Server;
  let downstreamUrl: string;

  beforeAll(async () => {
    downstream = http.createServer((req, res) => {
      received.push(req.headers);
      res.end('{}');
    });
    await new Promise<void>((resolve) => downstream.listen(0, '127.0.0.1', resolve));
    downstreamUrl = `http://127.0.0.1:${(downstream.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => downstream.close(() => resolve())));

  const app = createServiceApp({
    name: 'context-test',
    description: 'request context test',
    logger: log.logger,
    health: {},
    mount: (app) => {
      app.post('/work', async (req, res) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        log.logger.child({ component: 'worker' }).info({ size: Object.keys(req.body as object).length }, 'work done');
        await callService(`${downstreamUrl}/on-behalf`, {}, { service: 'downstream', asCaller: true });
        await callService(`${downstreamUrl}/as-itself`, { headers: { 'x-internal-api-key': 'k' } }, { service: 'downstream' });
        res.json({ ok: true });
      });
    },
  });

  const work = () => notUnderContract(request(app).post('/work'), 'a route of a bare service app made by this test');

  it('gives every line logged during a request, not only errors, the request id', async () => {
    const requestId = `trace-${randomUUID()}`;
    const res = await work().set('X-Request-Id', requestId).send({ a: 1 });
    expect(res.status).toBe(200);
    log.logger.info('between requests');
    const lines = entries(log);
    expect(lines.find((entry) => entry.msg === 'work done')).toMatchObject({ requestId, component: 'worker', size: 1 });
    expect(lines.find((entry) => entry.msg === 'between requests')).not.toHaveProperty('requestId');
  });

  it("carries the request id on calls to other services, and the caller's token only on its behalf", async () => {
    received.length = 0;
    const requestId = `trace-${randomUUID()}`;
    const res = await work().set('X-Request-Id', requestId).set('Authorization', 'Bearer caller-token').send({});
    expect(res.status).toBe(200);
    expect(received).toHaveLength(2);
    expect(received[0]).toMatchObject({ 'x-request-id': requestId, authorization: 'Bearer caller-token' });
    expect(received[1]).toMatchObject({ 'x-request-id': requestId, 'x-internal-api-key': 'k' });
    expect(received[1]).not.toHaveProperty('authorization');
  });

  it("never logs the caller's token", async () => {
    await work().set('Authorization', 'Bearer secret-token').send({});
    expect(log.lines.join('\n')).not.toContain('secret-token');
  });
});

describe('event handlers', () => {
  it("run outside the publishing request's context", async () => {
    let seen: RequestContext | undefined;
    await runInContext({ requestId: 'publisher', authorization: 'Bearer caller' }, () =>
      deliver({ groupId: 'g', topics: ['t'], handle: async () => void (seen = currentContext()) }, [{ topic: 't', key: 'k', value: '{}', partition: 0, offset: '0' }]),
    );
    expect(seen).toEqual({});
  });
});

describe('a request through the services', () => {
  const log = captureLog('info');
  let stack: Stack;
  let book: CatalogueBook;

  beforeAll(async () => {
    stack = await startStack({ services: ['book', 'payment'], logger: log.logger });
    book = await createBook(stack, (await adminSession(stack)).bearer, 'Adam Bede', 12.5);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it("logs the checkout with the request's X-Request-Id; the buyer's token reaches the user service without a parameter", async () => {
    const buyer = await registeredUser(stack);
    const requestId = `checkout-${randomUUID()}`;
    const res = await request(stack.urls.payment)
      .post('/api/payments/checkout')
      .set('Authorization', buyer.bearer)
      .set('X-Request-Id', requestId)
      .send({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] });
    // The user service answers the buyer's profile only to the buyer: the token went along.
    expect(res.status).toBe(200);
    const created = entries(log).find((entry) => entry.msg === 'checkout created' && entry.paymentId === res.body.paymentId);
    expect(created).toMatchObject({ level: 30, requestId });
  });

  it("runs a subgraph's GraphQL request in the request's context", async () => {
    const buyer = await registeredUser(stack);
    const requestId = `graphql-${randomUUID()}`;
    // Reached through the request's DataLoader, batched on a later tick.
    const batch = jest.spyOn(PaymentService.prototype, 'paymentsOfUsers');
    let seen: RequestContext | undefined;
    batch.mockImplementation(async (_principal, userIds) => {
      seen = currentContext();
      return userIds.map(() => []);
    });
    try {
      const res = await request(stack.urls.payment)
        .post('/graphql')
        .set('Authorization', buyer.bearer)
        .set('X-Request-Id', requestId)
        .send({ query: '{ myPayments { paymentId } }' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { myPayments: [] } });
    } finally {
      batch.mockRestore();
    }
    expect(seen).toEqual({ requestId, authorization: buyer.bearer });
  });
});
