import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createBook } from '../../test/commerce';
import { errorCodes, graphql } from '../../test/graphql';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';
import { TOPICS } from '../../platform/events/topics';

let stack: Stack;
let admin: string;
let bookId: string;

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'analytics'] });
  admin = (await adminSession(stack)).bearer;
  bookId = (await createBook(stack, admin, 'Emma', 15)).id;
  const paymentId = randomUUID();
  const common = { paymentId, checkoutId: randomUUID(), userId: randomUUID(), amount: 30, occurredAt: '2026-10-02T10:00:00.000Z' };
  const items = [{ bookId, bookTitle: 'Emma', quantity: 2, price: 15 }];
  await stack.bus.publish([
    { topic: TOPICS.paymentCreated, key: paymentId, value: JSON.stringify({ eventId: randomUUID(), type: 'PaymentCreatedEvent', ...common, items }) },
    {
      topic: TOPICS.paymentSuccess,
      key: paymentId,
      value: JSON.stringify({
        eventId: randomUUID(),
        type: 'PaymentSuccessEvent',
        ...common,
        transactionId: 'pi_1',
        items,
        email: 'e@example.com',
        firstName: 'E',
        phoneNumber: '+10000000000',
      }),
    },
  ]);
  // The two events travel on two topics, so either may be applied first: wait for both.
  await waitFor(
    async () => {
      const dashboard = (await request(stack.urls.analytics).get('/analytics/dashboard').set('Authorization', admin)).body;
      return dashboard.paidOrders === 1 && dashboard.totalOrders === 1;
    },
    { what: 'the checkout and the sale' },
  );
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const sub = (query: string, bearer?: string, variables?: Record<string, unknown>) => graphql(stack.urls.analytics, query, { bearer, variables });

describe('the analytics subgraph', () => {
  it('answers the same figures as REST, money as decimal strings', async () => {
    const res = await sub('{ dashboard { totalOrders paidOrders failedPayments totalRevenue averageOrderValue booksSold paymentSuccessRate totalRefunds refundedAmount } }', admin);
    expect(res.body).toEqual({
      data: {
        dashboard: {
          totalOrders: 1,
          paidOrders: 1,
          failedPayments: 0,
          totalRevenue: '30.00',
          averageOrderValue: '30.00',
          booksSold: 2,
          paymentSuccessRate: 100,
          totalRefunds: 0,
          refundedAmount: '0.00',
        },
      },
    });
    const ranged = await sub(
      'query ($from: String, $to: String) { revenueReport(from: $from, to: $to) { totalRevenue daily { date revenue paidOrders } monthly { month revenue paidOrders ordersCreated } } }',
      admin,
      { from: '2026-10-01', to: '2026-10-31' },
    );
    expect(ranged.body.data.revenueReport).toEqual({
      totalRevenue: '30.00',
      daily: [{ date: '2026-10-02', revenue: '30.00', paidOrders: 1 }],
      monthly: [{ month: '2026-10', revenue: '30.00', paidOrders: 1, ordersCreated: 1 }],
    });
    const rest = await request(stack.urls.analytics).get('/analytics/payments').set('Authorization', admin);
    const payments = await sub('{ paymentReport { paidOrders failedPayments paymentSuccessRate refundedPayments refundedAmount totalRefunds totalRefundedAmount } }', admin);
    expect(payments.body.data.paymentReport).toEqual({ ...rest.body, refundedAmount: '0.00', totalRefundedAmount: '0.00' });
  });

  it('answers BAD_USER_INPUT for a reversed or malformed range', async () => {
    expect(errorCodes((await sub('{ orderReport(from: "2026-10-05", to: "2026-10-01") { totalOrders } }', admin)).body)).toEqual(['BAD_USER_INPUT']);
    expect(errorCodes((await sub('{ orderReport(from: "abc") { totalOrders } }', admin)).body)).toEqual(['BAD_USER_INPUT']);
  });

  it('is for admins: FORBIDDEN for a USER, UNAUTHENTICATED anonymous', async () => {
    const user = await registeredUser(stack);
    expect(errorCodes((await sub('{ dashboard { totalOrders } }', user.bearer)).body)).toEqual(['FORBIDDEN']);
    expect(errorCodes((await sub('{ bookReport { booksSold } }')).body)).toEqual(['UNAUTHENTICATED']);
    const entities = await sub('query ($r: [_Any!]!) { _entities(representations: $r) { ... on Book { sales { quantitySold } } } }', user.bearer, {
      r: [{ __typename: 'Book', id: bookId }],
    });
    expect(errorCodes(entities.body)).toEqual(['FORBIDDEN']);
  });

  it('resolves Book.sales through _entities, zero for a book never sold, and points best sellers at their Book', async () => {
    const never = randomUUID();
    const res = await sub('query ($r: [_Any!]!) { _entities(representations: $r) { ... on Book { id sales { quantitySold revenue } } } }', admin, {
      r: [
        { __typename: 'Book', id: bookId },
        { __typename: 'Book', id: never },
      ],
    });
    expect(res.body.data._entities).toEqual([
      { id: bookId, sales: { quantitySold: 2, revenue: '30.00' } },
      { id: never, sales: { quantitySold: 0, revenue: '0.00' } },
    ]);
    const top = await sub('{ bookReport { booksSold topBooks { bookId bookTitle quantitySold revenue } } }', admin);
    expect(top.body.data.bookReport).toEqual({ booksSold: 2, topBooks: [{ bookId, bookTitle: 'Emma', quantitySold: 2, revenue: '30.00' }] });
  });
});
