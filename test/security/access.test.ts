/**
 * Role escalation and IDOR through the gateway (issue 8, item 4): a USER on every ADMIN route gets
 * 403 and changes nothing; another user's payment, order, sync-order and profile are 404/403 per the
 * contract over REST and GraphQL (and at a subgraph's `_entities`, which the gateway does not serve);
 * fields a client slips into a body (role, userId, email) are not assigned.
 */
import { randomUUID } from 'node:crypto';
import { checkout, createBook, type CatalogueBook } from '../commerce';
import { orderOf, paidPurchase } from '../graphql';
import { adminSession, expectEnvelope, newUser, registeredUser } from '../harness';
import { send, startSystem, type Answer, type System } from '../hostile';
import { claimsOf } from '../jwt';

let system: System;
let admin: Awaited<ReturnType<typeof adminSession>>;
let victim: Awaited<ReturnType<typeof registeredUser>>;
let intruder: Awaited<ReturnType<typeof registeredUser>>;
let book: CatalogueBook;
/** The victim's paid purchase, its order, and a checkout still pending. */
let paidPaymentId: string;
let orderId: string;
let pending: { paymentId: string; checkoutId: string };

beforeAll(async () => {
  system = await startSystem();
  admin = await adminSession(system.stack);
  victim = await registeredUser(system.stack);
  intruder = await registeredUser(system.stack);
  book = await createBook(system.stack, admin.bearer, 'Private Letters', 15);
  paidPaymentId = (await paidPurchase(system.stack, victim.bearer, admin.bearer)).paymentId;
  orderId = await orderOf(system.stack, victim.bearer, paidPaymentId);
  const checkoutId = randomUUID();
  const started = await checkout(system.stack, victim.bearer, [{ bookId: book.id, quantity: 1 }], checkoutId);
  pending = { paymentId: started.body.paymentId, checkoutId };
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

function rest(method: string, path: string, bearer: string, body?: unknown): Promise<Answer> {
  return send(system.url, { method, path, headers: { Authorization: bearer, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
}

function gql(query: string, bearer: string, variables: Record<string, unknown> = {}): Promise<Answer> {
  return send(system.url, { method: 'POST', path: '/graphql', headers: { Authorization: bearer, 'Content-Type': 'application/json' }, body: JSON.stringify({ query, variables }) });
}

function expectStatus(answer: Answer, status: number, message?: string): void {
  expectEnvelope(answer);
  expect({ status: answer.status, message: (answer.json as { message: string }).message }).toEqual({ status, message: message ?? expect.any(String) });
}

/** The codes of a GraphQL answer's errors, and its data with the nulls left out. */
function graphqlOutcome(answer: Answer): { codes: unknown[]; data: Record<string, unknown> } {
  const body = answer.json as { errors?: { extensions?: { code?: string } }[]; data?: Record<string, unknown> | null };
  const data = Object.fromEntries(Object.entries(body.data ?? {}).filter(([, value]) => value !== null));
  return { codes: (body.errors ?? []).map((error) => error.extensions?.code), data };
}

const profileChanges = { firstName: 'Mallory', lastName: 'Intruder', phoneNumber: '+14155550999', dateOfBirth: '1980-01-01', address: '666 Attack Ave' };
const bookChanges = () => ({
  isbn: '9780306406157',
  title: 'Hijacked',
  description: null,
  price: 0.01,
  language: 'en',
  publishedDate: '2000-01-01',
  publisherId: '5a6b7c8d-9e0f-4112-8233-4455667788aa',
  categoryId: '5a6b7c8d-9e0f-4112-8233-4455667788ab',
  authorIds: ['5a6b7c8d-9e0f-4112-8233-4455667788ac'],
  stock: 0,
});

describe('a USER on every ADMIN route', () => {
  const ANALYTICS = ['dashboard', 'revenue', 'revenue/daily', 'revenue/monthly', 'orders', 'books', 'payments'];

  it('REST: 403 on each, with the analytics message where the contract gives one', async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/user/'],
      ['GET', '/api/user'],
      ['GET', '/api/user/search?keyword=a'],
      ['DELETE', `/api/user/${victim.userId}`],
      ['POST', '/api/books/create', { ...bookChanges(), isbn: '9780140449136' }],
      ['PUT', `/api/books/update/${book.id}`, bookChanges()],
      ['DELETE', `/api/books/${book.id}`],
      ['GET', '/api/orders'],
      ['GET', '/api/orders/?status=CONFIRMED'],
      ['PUT', `/api/orders/${orderId}/status?status=CANCELLED`],
    ];
    for (const [method, path, body] of routes) {
      const answer = await rest(method, path, intruder.bearer, body);
      expect({ route: `${method} ${path}`, status: answer.status }).toEqual({ route: `${method} ${path}`, status: 403 });
      expectEnvelope(answer);
    }
    for (const report of ANALYTICS) expectStatus(await rest('GET', `/analytics/${report}?from=2020-01-01`, intruder.bearer), 403, 'Admin role is required to access analytics');
  });

  it("REST: the buyer moving their own order along is refused too (an ADMIN's job)", async () => {
    expectStatus(await rest('PUT', `/api/orders/${orderId}/status?status=CANCELLED`, victim.bearer), 403);
  });

  it('REST: nothing the refused requests asked for happened', async () => {
    expect((await rest('GET', `/api/user/${victim.userId}`, admin.bearer)).status).toBe(200);
    expect((await rest('GET', `/api/books/${book.id}`, admin.bearer)).json).toMatchObject({ id: book.id, title: 'Private Letters', price: 15 });
    expect((await rest('GET', '/api/books?q=9780140449136', admin.bearer)).json).toEqual([]);
    expect((await rest('GET', `/api/orders/${orderId}`, admin.bearer)).json).toMatchObject({ status: 'CONFIRMED' });
  });

  it('GraphQL: FORBIDDEN on each ADMIN field and mutation, with no data', async () => {
    const operations: [string, Record<string, unknown>?][] = [
      ['{ users { userId email } }'],
      ['{ searchUsers(keyword: "a") { userId } }'],
      ['mutation ($id: ID!) { deleteUser(userId: $id) }', { id: victim.userId }],
      ['{ orders { orderId } }'],
      ['mutation ($id: ID!) { updateOrderStatus(orderId: $id, status: CANCELLED) { orderId status } }', { id: orderId }],
      ['{ dashboard { totalRevenue } }'],
      ['{ revenueReport { totalRevenue } }'],
      ['{ orderReport { totalOrders } }'],
      ['{ bookReport { booksSold } }'],
      ['{ paymentReport { paidOrders } }'],
      ['query ($id: ID!) { book(id: $id) { title sales { quantitySold revenue } } }', { id: book.id }],
    ];
    for (const [query, variables] of operations) {
      const outcome = graphqlOutcome(await gql(query, intruder.bearer, variables));
      expect({ query, codes: outcome.codes, leaked: JSON.stringify(outcome.data).match(/quantitySold|revenue|email|totalOrders|paidOrders|booksSold|orderId"/) }).toEqual({
        query,
        codes: ['FORBIDDEN'],
        leaked: null,
      });
    }
    expect((await rest('GET', `/api/user/${victim.userId}`, admin.bearer)).status).toBe(200);
    expect((await rest('GET', `/api/orders/${orderId}`, admin.bearer)).json).toMatchObject({ status: 'CONFIRMED' });
  });
});

describe("another user's resources (IDOR)", () => {
  it("REST: the victim's payment, its sync-order, the order and the order by payment are 404 to the intruder", async () => {
    for (const paymentId of [paidPaymentId, pending.paymentId, paidPaymentId.toUpperCase()]) {
      expectStatus(await rest('GET', `/api/payments/${paymentId}`, intruder.bearer), 404, `Payment not found: ${paymentId.toLowerCase()}`);
      expectStatus(await rest('POST', `/api/payments/${paymentId}/sync-order`, intruder.bearer), 404);
      expectStatus(await rest('GET', `/api/orders/payment/${paymentId}`, intruder.bearer), 404);
    }
    expectStatus(await rest('GET', `/api/orders/${orderId}`, intruder.bearer), 404);
    expectStatus(await rest('GET', `/api/orders/${orderId.toUpperCase()}`, intruder.bearer), 404);
    expectStatus(await rest('POST', `/api/orders/${orderId}/cancel`, intruder.bearer), 404, `Order not found: ${orderId}`);
    expectStatus(await rest('GET', `/api/orders/userId?id=${victim.userId}`, intruder.bearer), 403, "Cannot access another user's orders");
    // The same requests from the owner succeed: the 404s are about who asks.
    expect((await rest('GET', `/api/payments/${paidPaymentId}`, victim.bearer)).status).toBe(200);
    expect((await rest('GET', `/api/orders/${orderId}`, victim.bearer)).json).toMatchObject({ status: 'CONFIRMED' });
    expect((await rest('GET', `/api/orders/userId?id=${victim.userId}`, victim.bearer)).status).toBe(200);
  });

  it("REST: the intruder's own lists hold nothing of the victim's", async () => {
    const payments = await rest('GET', '/api/payments', intruder.bearer);
    const orders = await rest('GET', '/api/orders/me', intruder.bearer);
    expect([payments.status, payments.json, orders.status, orders.json]).toEqual([200, [], 200, []]);
  });

  it("REST: updating the victim's profile is 403 and changes nothing", async () => {
    expectStatus(await rest('PUT', `/api/user/update/${victim.userId}`, intruder.bearer, { ...profileChanges, email: victim.email }), 403);
    expectStatus(await rest('PUT', `/api/user/update/${victim.userId.toUpperCase()}`, intruder.bearer, profileChanges), 403);
    expect((await rest('GET', `/api/user/${victim.userId}`, admin.bearer)).json).toMatchObject({ firstName: 'Ada', lastName: 'Reader', address: victim.address });
  });

  it("REST: reusing the victim's checkoutId is 409 and shows nothing of their payment", async () => {
    const answer = await rest('POST', '/api/payments/checkout', intruder.bearer, { checkoutId: pending.checkoutId, items: [{ bookId: book.id, quantity: 1 }] });
    expectStatus(answer, 409);
    expect(answer.text).not.toContain(pending.paymentId);
    expect(answer.text).not.toContain('secret');
  });

  it("GraphQL: the victim's payment and order are NOT_FOUND, their profile and its lists FORBIDDEN, their update FORBIDDEN", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['query ($id: ID!) { payment(paymentId: $id) { paymentId amount } }', { id: paidPaymentId }, 'NOT_FOUND'],
      ['query ($id: ID!) { payment(paymentId: $id) { paymentId amount } }', { id: pending.paymentId.toUpperCase() }, 'NOT_FOUND'],
      ['query ($id: ID!) { order(orderId: $id) { orderId totalAmount } }', { id: orderId }, 'NOT_FOUND'],
      ['query ($id: ID!) { user(userId: $id) { userId email } }', { id: victim.userId }, 'FORBIDDEN'],
      ['query ($id: ID!) { user(userId: $id) { payments { paymentId } } }', { id: victim.userId }, 'FORBIDDEN'],
      ['query ($id: ID!) { user(userId: $id) { orders { orderId } } }', { id: victim.userId }, 'FORBIDDEN'],
      ['mutation ($id: ID!, $input: UserInput!) { updateUser(userId: $id, input: $input) { userId } }', { id: victim.userId, input: profileChanges }, 'FORBIDDEN'],
    ];
    for (const [query, variables, code] of cases) {
      const answer = await gql(query, intruder.bearer, variables);
      expect({ query, ...graphqlOutcome(answer) }).toEqual({ query, codes: [code], data: {} });
      expect(answer.text).not.toContain(victim.email);
    }
    const mine = graphqlOutcome(await gql('{ myPayments { paymentId } myOrders { orderId } me { userId } }', intruder.bearer));
    expect(mine).toEqual({ codes: [], data: { myPayments: [], myOrders: [], me: { userId: intruder.userId } } });
    expect((await rest('GET', `/api/user/${victim.userId}`, admin.bearer)).json).toMatchObject({ firstName: 'Ada' });
  });

  it('GraphQL: no client secret is reachable, not even for the owner', async () => {
    const answer = await gql('query ($id: ID!) { payment(paymentId: $id) { paymentId clientSecret } }', victim.bearer, { id: pending.paymentId });
    expect(answer.status).toBe(400);
    expect(graphqlOutcome(answer).codes).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });

  it("a subgraph's own _entities (which the gateway hides) applies the same rules", async () => {
    const hidden = await gql('{ _entities(representations: [{ __typename: "Payment", paymentId: "x" }]) { __typename } }', intruder.bearer);
    expect(hidden.status).toBe(400);
    const entities = async (service: 'payment' | 'order' | 'user', representation: { __typename: string } & Record<string, unknown>, fields: string) =>
      graphqlOutcome(
        await send(system.stack.urls[service], {
          method: 'POST',
          path: '/graphql',
          headers: { Authorization: intruder.bearer, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            query: `query ($r: [_Any!]!) { _entities(representations: $r) { ... on ${representation.__typename} { ${fields} } } }`,
            variables: { r: [representation] },
          }),
        }),
      );
    const leakedNothing = (outcome: { data: Record<string, unknown> }) => JSON.stringify(outcome.data).match(/amount|totalAmount|email/);
    const payment = await entities('payment', { __typename: 'Payment', paymentId: paidPaymentId }, 'paymentId amount');
    const order = await entities('order', { __typename: 'Order', orderId }, 'orderId totalAmount');
    const user = await entities('user', { __typename: 'User', userId: victim.userId }, 'userId email');
    expect([payment.codes, order.codes, user.codes]).toEqual([['NOT_FOUND'], ['NOT_FOUND'], ['FORBIDDEN']]);
    expect([leakedNothing(payment), leakedNothing(order), leakedNothing(user)]).toEqual([null, null, null]);
  });
});

describe('fields a client slips into a body', () => {
  it('registration with role ADMIN makes a USER', async () => {
    const body = { ...newUser(), role: 'ADMIN', userId: admin.userId, status: 'ACTIVE' };
    const registered = await send(system.url, { method: 'POST', path: '/auth/register', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(registered.status).toBe(200);
    expect((registered.json as { userId: string }).userId).not.toBe(admin.userId);
    const login = await send(system.url, {
      method: 'POST',
      path: '/auth/login',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: body.email, password: body.password, deviceId: 'd' }),
    });
    const token = (login.json as { accessToken: string }).accessToken;
    expect(claimsOf(token)).toMatchObject({ role: 'USER', sub: (registered.json as { userId: string }).userId });
    expectStatus(await rest('GET', '/api/user/', `Bearer ${token}`), 403);
  });

  it("a profile update carrying userId, role or createdAt changes only the editable fields of the caller's own profile", async () => {
    const reader = await registeredUser(system.stack);
    const before = (await rest('GET', `/api/user/${reader.userId}`, reader.bearer)).json as Record<string, unknown>;
    const answer = await rest('PUT', `/api/user/update/${reader.userId}`, reader.bearer, {
      ...profileChanges,
      userId: victim.userId,
      role: 'ADMIN',
      createdAt: '2000-01-01T00:00:00.000',
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ userId: reader.userId, createdAt: before.createdAt, email: reader.email, firstName: 'Mallory' });
    expect((await rest('GET', `/api/user/${victim.userId}`, admin.bearer)).json).toMatchObject({ firstName: 'Ada' });
  });
});
