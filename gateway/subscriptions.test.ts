/**
 * GraphQL subscriptions through the gateway (docs/subscriptions.md), over Server-Sent Events, on a
 * stack of real services fed by the real purchase flow (checkout, the Stripe simulator confirms, the
 * order and analytics follow) and the run's bus (Kafka when KAFKA_BROKERS is set).
 */
import request from 'supertest';
import { createLogger } from '../platform/logger';
import { checkout, createBook, type CatalogueBook } from '../test/commerce';
import { startGateway, type RunningGateway } from '../test/gateway';
import { adminSession, login, registeredUser, startStack, waitFor, type Stack } from '../test/harness';
import { claimsOf, headerOf, nowSeconds, signingKey, signJwt } from '../test/jwt';
import { openSse, resultOf, type SseStream } from '../test/sse';
import { graphqlHalf } from './graphql';

jest.setTimeout(90_000);

const DASHBOARD = 'subscription Live { dashboardUpdated { totalOrders paidOrders totalRevenue } }';
const PAYMENT = 'subscription Payment($id: ID!) { paymentUpdated(paymentId: $id) { paymentId status order { orderId status } } }';
const ORDER = 'subscription Order($id: ID!) { orderUpdated(orderId: $id) { orderId status refundStatus } }';

type Figures = { dashboardUpdated: { totalOrders: number; paidOrders: number; totalRevenue: string } };
type PaymentState = { paymentUpdated: { paymentId: string; status: string; order: { orderId: string; status: string } | null } | null };

let stack: Stack, gateway: RunningGateway, admin: { bearer: string }, book: CatalogueBook;
const opened: SseStream[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'], env: { GATEWAY_SUBSCRIPTIONS_PER_CALLER: '4' } });
  const logger = createLogger(stack.config.logLevel);
  gateway = await startGateway(stack.config, { logger, mountGraphql: graphqlHalf({ config: stack.config, logger, bus: stack.bus }) });
  admin = await adminSession(stack);
  book = await createBook(stack, admin.bearer, 'Live figures', 12.5, 1000);
});

afterEach(() => {
  for (const stream of opened.splice(0)) stream.close();
});

afterAll(async () => {
  await gateway?.stop();
  await stack?.stop();
});

async function subscribe(query: string, bearer: string | undefined, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<SseStream> {
  const stream = await openSse(`${gateway.url}/graphql`, { body: { query, variables }, headers: { ...(bearer ? { authorization: bearer } : {}), ...headers } });
  opened.push(stream);
  return stream;
}

/** A checkout of `quantity` copies by `buyer`, confirmed (paid) unless `pay` is false. */
async function purchase(buyer: { bearer: string }, quantity = 1, pay = true): Promise<{ paymentId: string; paymentIntentId: string }> {
  const res = await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity }]);
  expect(res.status).toBe(200);
  if (pay) await stack.stripe!.confirm(res.body.paymentIntentId);
  return res.body as { paymentId: string; paymentIntentId: string };
}

async function runs(): Promise<number> {
  const text = (await request(gateway.url).get('/actuator/prometheus')).text;
  return Number(/^gateway_subscription_runs_total\S* (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

describe('subscriptions at the gateway', () => {
  it('answers the dashboard as it is now first, the same figures as the REST dashboard', async () => {
    const stream = await subscribe(DASHBOARD, admin.bearer);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = resultOf<Figures>(await stream.nth(0));
    const rest = (await request(stack.urls.analytics).get('/analytics/dashboard').set('Authorization', admin.bearer)).body as { totalOrders: number; paidOrders: number };
    expect(first.data?.dashboardUpdated).toMatchObject({ totalOrders: rest.totalOrders, paidOrders: rest.paidOrders });
    expect(stream.events[0].id).toEqual(expect.any(String));
  });

  it("delivers a change: someone else's payment shows in an admin's dashboard (an operation without a name)", async () => {
    const stream = await subscribe(DASHBOARD.replace('subscription Live', 'subscription'), admin.bearer);
    const before = resultOf<Figures>(await stream.nth(0)).data!.dashboardUpdated;
    const buyer = await registeredUser(stack);
    await purchase(buyer, 2);
    const after = await waitFor(
      () => stream.events.map((event) => resultOf<Figures>(event).data!.dashboardUpdated).find((figures) => figures.paidOrders === before.paidOrders + 1),
      {
        what: 'the paid purchase on the stream',
      },
    );
    expect(after.totalRevenue).toBe((Number(before.totalRevenue) + 25).toFixed(2));
  });

  it('tells a shop its payment went through and its order was made, without polling', async () => {
    const buyer = await registeredUser(stack);
    const { paymentId, paymentIntentId } = await purchase(buyer, 1, false);
    const stream = await subscribe(PAYMENT, buyer.bearer, { id: paymentId });
    expect(resultOf<PaymentState>(await stream.nth(0)).data?.paymentUpdated).toMatchObject({ paymentId, status: 'PAYMENT_PENDING', order: null });
    await stack.stripe!.confirm(paymentIntentId);
    const made = await waitFor(() => stream.events.map((event) => resultOf<PaymentState>(event).data?.paymentUpdated).find((payment) => payment?.order), {
      what: 'the order on the stream',
    });
    expect(made).toMatchObject({ status: 'SUCCESS', order: { orderId: expect.any(String), status: 'CONFIRMED' } });
  });

  it('follows an order through its cancellation', async () => {
    const buyer = await registeredUser(stack);
    const { paymentId } = await purchase(buyer);
    const payments = await subscribe(PAYMENT, buyer.bearer, { id: paymentId });
    const withOrder = await waitFor(() => payments.events.map((event) => resultOf<PaymentState>(event).data?.paymentUpdated?.order).find(Boolean), { what: 'the order' });
    const stream = await subscribe(ORDER, buyer.bearer, { id: withOrder.orderId });
    expect(resultOf(await stream.nth(0)).data).toEqual({ orderUpdated: { orderId: withOrder.orderId, status: 'CONFIRMED', refundStatus: null } });
    expect((await request(gateway.url).post(`/api/orders/${withOrder.orderId}/cancel`).set('Authorization', buyer.bearer)).status).toBe(204);
    await waitFor(() => stream.events.some((event) => (resultOf(event).data as { orderUpdated: { status: string } }).orderUpdated.status === 'CANCELLED'), {
      what: 'the cancellation',
    });
  });

  it("never sends another user's payment: refused at subscribe, and silent on their events", async () => {
    const owner = await registeredUser(stack);
    const other = await registeredUser(stack);
    const { paymentId } = await purchase(owner, 1, false);
    // The owner watches it: the same document and variables, other rights.
    const owners = await subscribe(PAYMENT, owner.bearer, { id: paymentId });
    expect(resultOf<PaymentState>(await owners.nth(0)).data?.paymentUpdated?.paymentId).toBe(paymentId);
    const refused = await subscribe(PAYMENT, other.bearer, { id: paymentId });
    const answer = resultOf(await refused.nth(0));
    expect(answer.data?.paymentUpdated ?? null).toBeNull();
    expect(answer.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await refused.nth(1)).event).toBe('complete');

    const mine = await purchase(other, 1, false);
    const watching = await subscribe(PAYMENT, other.bearer, { id: mine.paymentId });
    await watching.nth(0);
    await purchase(owner, 3);
    // The owner's payment settles, its order is made; then the other user's own payment changes.
    await waitFor(async () => (await request(gateway.url).get('/api/orders/me').set('Authorization', owner.bearer)).body.length === 1, { what: "the owner's order" });
    await stack.stripe!.confirm(mine.paymentIntentId);
    await waitFor(() => watching.events.some((event) => resultOf<PaymentState>(event).data?.paymentUpdated?.status === 'SUCCESS'), { what: 'the own payment to succeed' });
    for (const event of watching.events.filter((e) => e.event === 'next')) expect(resultOf<PaymentState>(event).data?.paymentUpdated?.paymentId).toBe(mine.paymentId);
  });

  it('computes one answer per event for subscribers of the same selection and rights, and hands it to each', async () => {
    // Other sessions of the admin, on devices of their own (a second login on one device ends the first).
    const sessions = [
      admin,
      ...(await Promise.all(
        ['tablet', 'laptop'].map(async (device) => ({ bearer: `Bearer ${(await login(stack.urls.auth, stack.admin.email, stack.admin.password, device)).accessToken}` })),
      )),
    ];
    const streams = await Promise.all(sessions.map((session) => subscribe(DASHBOARD, session.bearer)));
    await Promise.all(streams.map((stream) => stream.nth(0)));
    const before = await runs();
    const buyer = await registeredUser(stack);
    const counted = resultOf<Figures>(streams[0].events[0]).data!.dashboardUpdated.totalOrders + 1;
    await purchase(buyer, 1, false);
    await Promise.all(
      streams.map((stream) =>
        waitFor(() => stream.events.some((event) => resultOf<Figures>(event).data!.dashboardUpdated.totalOrders === counted), { what: 'the new checkout on every stream' }),
      ),
    );
    // One event (payment-created), one run for the three streams.
    expect((await runs()) - before).toBe(1);
  });

  it('resumes with Last-Event-ID: the current value at once, the same id when nothing changed, then the changes', async () => {
    const first = await subscribe(DASHBOARD, admin.bearer);
    const seen = await first.nth(0);
    first.close();
    const again = await subscribe(DASHBOARD, admin.bearer, {}, { 'last-event-id': seen.id! });
    expect((await again.nth(0)).id).toBe(seen.id);
    again.close();

    await purchase(await registeredUser(stack), 1, false);
    await waitFor(
      async () =>
        (await request(stack.urls.analytics).get('/analytics/dashboard').set('Authorization', admin.bearer)).body.totalOrders >
        resultOf<Figures>(seen).data!.dashboardUpdated.totalOrders,
      {
        what: 'analytics to count the checkout',
      },
    );
    const resumed = await subscribe(DASHBOARD, admin.bearer, {}, { 'last-event-id': seen.id! });
    const current = await resumed.nth(0);
    expect(current.id).not.toBe(seen.id);
    expect(resultOf<Figures>(current).data!.dashboardUpdated.totalOrders).toBe(resultOf<Figures>(seen).data!.dashboardUpdated.totalOrders + 1);
    await purchase(await registeredUser(stack), 1, false);
    expect(resultOf<Figures>(await resumed.nth(1)).data!.dashboardUpdated.totalOrders).toBe(resultOf<Figures>(current).data!.dashboardUpdated.totalOrders + 1);
  });

  it('ends the stream when its access token expires', async () => {
    const buyer = await registeredUser(stack);
    const { paymentId } = await purchase(buyer, 1, false);
    const real = buyer.tokens.accessToken;
    const shortLived = signJwt({ ...claimsOf(real), exp: nowSeconds() + 2 }, signingKey(stack.config.jwt.privateKeyFile), { kid: headerOf(real).kid });
    const stream = await subscribe(PAYMENT, `Bearer ${shortLived}`, { id: paymentId });
    expect(resultOf<PaymentState>(await stream.nth(0)).data?.paymentUpdated?.status).toBe('PAYMENT_PENDING');
    const ended = resultOf(await stream.nth(1, 10_000));
    expect(ended.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect((await stream.nth(2)).event).toBe('complete');
    await stream.closed;
  });

  it('ends the stream within 2 s of its session being revoked, and refuses the token afterwards', async () => {
    const buyer = await registeredUser(stack);
    const { paymentId } = await purchase(buyer, 1, false);
    const stream = await subscribe(PAYMENT, buyer.bearer, { id: paymentId });
    await stream.nth(0);
    expect((await request(stack.urls.auth).post('/auth/logout').send({ refreshToken: buyer.tokens.refreshToken })).status).toBe(204);
    const ended = resultOf(await stream.nth(1, 2000));
    expect(ended.errors?.[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    await stream.closed;
    const refused = await subscribe(PAYMENT, buyer.bearer, { id: paymentId });
    expect(refused.status).toBe(401);
  });

  it('ends the streams of a user who is deleted', async () => {
    const buyer = await registeredUser(stack);
    const { paymentId } = await purchase(buyer, 1, false);
    const stream = await subscribe(PAYMENT, buyer.bearer, { id: paymentId });
    await stream.nth(0);
    expect((await request(stack.urls.user).delete(`/api/user/${buyer.userId}`).set('Authorization', admin.bearer)).status).toBe(200);
    expect(resultOf(await stream.nth(1, 5000)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('answers 401 without a token and 429 past the streams one caller may hold, then lets one more in once one closes', async () => {
    expect((await subscribe(DASHBOARD, undefined)).status).toBe(401);
    const buyer = await registeredUser(stack);
    const { paymentId } = await purchase(buyer, 1, false);
    const held = [];
    for (let i = 0; i < 4; i += 1) {
      const stream = await subscribe(PAYMENT, buyer.bearer, { id: paymentId });
      expect(stream.status).toBe(200);
      await stream.nth(0);
      held.push(stream);
    }
    const refused = await subscribe(PAYMENT, buyer.bearer, { id: paymentId });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(JSON.parse(await refused.text())).toEqual({
      errors: [{ message: 'At most 4 subscriptions may be open at once; close one first', extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } }],
    });
    // Another caller is not held to this one's count.
    expect((await subscribe(DASHBOARD, admin.bearer)).status).toBe(200);
    held[0].close();
    await waitFor(async () => (await subscribe(PAYMENT, buyer.bearer, { id: paymentId })).status === 200, { what: 'a stream once one closed' });
  });

  it('answers errors of the document on the stream, and a query sent as a stream is refused there', async () => {
    const invalid = await subscribe('subscription { dashboardUpdated { nope } }', admin.bearer);
    expect(resultOf(await invalid.nth(0)).errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const query = await subscribe('{ dashboard { totalOrders } }', admin.bearer);
    expect(resultOf(await query.nth(0)).errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    const user = await registeredUser(stack);
    const forbidden = await subscribe(DASHBOARD, user.bearer);
    expect(resultOf(await forbidden.nth(0)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('keeps the request id, and answers a subscription POSTed as JSON with a 400 that says how to subscribe', async () => {
    const stream = await subscribe(DASHBOARD, admin.bearer, {}, { 'x-request-id': 'live-request-1' });
    expect(stream.headers.get('x-request-id')).toBe('live-request-1');
    const res = await request(gateway.url).post('/graphql').set('Authorization', admin.bearer).send({ query: DASHBOARD });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toContain('text/event-stream');
  });
});
