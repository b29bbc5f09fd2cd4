import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { EMPTY_DASHBOARD, book, dashboardWhen, events, item, publish, type Publishable } from '../../test/analytics-events';
import { adminSession, expectEnvelope, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';
import { ratioHalfUp, resolveRange } from './service';

const [A, B, C, D, E] = [1, 2, 3, 4, 5].map(book);

describe('a hand-computed scenario over two months', () => {
  let stack: Stack;
  let admin: string;
  const get = (path: string) => request(stack.urls.analytics).get(path).set('Authorization', admin);
  /**
   * Both months as /analytics/revenue and /analytics/orders count them for 2026-09-30 to 2026-10-10:
   * p4, paid on 10-05, counts there; its refund comes out of 10-20, outside the range.
   */
  const MONTHS_OF_SEPT30_TO_OCT10 = [
    { month: '2026-09', revenue: 0, paidOrders: 0, ordersCreated: 1 },
    { month: '2026-10', revenue: 84.98, paidOrders: 3, ordersCreated: 2 },
  ];

  beforeAll(async () => {
    stack = await startStack({ services: ['analytics'] });
    admin = (await adminSession(stack)).bearer;
    const p1 = events(randomUUID(), 59.97, [item(A, 3, 19.99)]);
    const p2 = events(randomUUID(), 25, [item(B, 1, 25)]);
    const p3 = events(randomUUID(), 40, [item(C, 2, 20)]);
    const p4 = events(randomUUID(), 39.98, [item(A, 2, 19.99)]);
    const p5 = events(randomUUID(), 10, [item(D, 1, 10)]);
    const p6 = events(randomUUID(), 12.5, [item(B, 1, 12.5)]);
    const p7 = events(randomUUID(), 5, [item(E, 1, 5)]);
    const p7Success = p7.success('2026-10-10');
    await publish(stack, [
      p1.created('2026-09-10'),
      p1.success('2026-09-10'),
      p2.created('2026-09-15'),
      p2.failed('2026-09-15'),
      p3.created('2026-09-30'),
      p3.failed('2026-09-30'),
      p3.success('2026-10-01'),
      // The refund arrives before its success: the order of arrival must not matter. Refunded in
      // full from the provider's dashboard (no refund event of ours), it comes out on 10-20.
      p4.created('2026-10-05'),
      p4.refunded('2026-10-20'),
      p4.success('2026-10-05'),
      p5.success('2026-10-31'),
      p5.created('2026-10-31'),
      p6.created('2026-10-31'),
      // Legacy payment-completed, then payment-success and a redelivery of it: counted once.
      p7.created('2026-10-10'),
      p7.completed('2026-10-10'),
      p7Success,
      p7Success,
    ]);
    // Topics are consumed independently: wait until the last event of each kind has been ingested.
    await dashboardWhen(stack, admin, (d) => d.totalOrders === 7 && d.paidOrders === 4 && d.failedPayments === 1 && d.booksSold === 7);
    await waitFor(async () => (await get('/analytics/payments')).body.refundedPayments === 1, { what: 'the refund' });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers the dashboard', async () => {
    const res = await get('/analytics/dashboard');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...EMPTY_DASHBOARD,
      totalOrders: 7,
      paidOrders: 4,
      failedPayments: 1,
      totalRevenue: 114.97,
      averageOrderValue: 28.74,
      booksSold: 7,
      paymentSuccessRate: 80,
    });
  });

  it('answers payments with the refunds', async () => {
    expect((await get('/analytics/payments')).body).toEqual({
      paidOrders: 4,
      failedPayments: 1,
      paymentSuccessRate: 80,
      refundedPayments: 1,
      refundedAmount: 39.98,
      totalRefunds: 0,
      totalRefundedAmount: 0,
    });
  });

  it('answers books: sold, and the best sellers by quantity then revenue', async () => {
    expect((await get('/analytics/books')).body).toEqual({
      booksSold: 7,
      topBooks: [
        { bookId: A, bookTitle: 'Title 01', quantitySold: 3, revenue: 59.97 },
        { bookId: C, bookTitle: 'Title 03', quantitySold: 2, revenue: 40 },
        { bookId: D, bookTitle: 'Title 04', quantitySold: 1, revenue: 10 },
        { bookId: E, bookTitle: 'Title 05', quantitySold: 1, revenue: 5 },
      ],
    });
  });

  it('answers revenue for an inclusive range spanning both months', async () => {
    const res = await get('/analytics/revenue?from=2026-09-30&to=2026-10-10');
    expect(res.body).toEqual({
      totalRevenue: 84.98,
      daily: [
        { date: '2026-09-30', revenue: 0, paidOrders: 0 },
        { date: '2026-10-01', revenue: 40, paidOrders: 1 },
        { date: '2026-10-05', revenue: 39.98, paidOrders: 1 },
        { date: '2026-10-10', revenue: 5, paidOrders: 1 },
      ],
      monthly: MONTHS_OF_SEPT30_TO_OCT10,
    });
    expect((await get('/analytics/revenue/daily?from=2026-09-30&to=2026-10-10')).body).toEqual(res.body.daily);
    expect((await get('/analytics/revenue/monthly?from=2026-09-30&to=2026-10-10')).body).toEqual(res.body.monthly);
  });

  it('answers the whole two months, the refund out of the day it was refunded', async () => {
    const res = await get('/analytics/revenue/monthly?from=2026-09-01&to=2026-10-31');
    expect(res.body).toEqual([
      { month: '2026-09', revenue: 59.97, paidOrders: 1, ordersCreated: 3 },
      { month: '2026-10', revenue: 55, paidOrders: 3, ordersCreated: 4 },
    ]);
    const daily = await get('/analytics/revenue/daily?from=2026-09-01&to=2026-10-31');
    expect(daily.body.map((d: { date: string }) => d.date)).toEqual([
      '2026-09-10',
      '2026-09-15',
      '2026-09-30',
      '2026-10-01',
      '2026-10-05',
      '2026-10-10',
      '2026-10-20',
      '2026-10-31',
    ]);
    expect(daily.body.find((d: { date: string }) => d.date === '2026-10-20')).toEqual({ date: '2026-10-20', revenue: -39.98, paidOrders: -1 });
  });

  it('answers orders for the same range, totals covering the range only', async () => {
    expect((await get('/analytics/orders?from=2026-09-30&to=2026-10-10')).body).toEqual({
      totalOrders: 3,
      paidOrders: 3,
      daily: [
        { date: '2026-09-30', ordersCreated: 1, paidOrders: 0 },
        { date: '2026-10-01', ordersCreated: 0, paidOrders: 1 },
        { date: '2026-10-05', ordersCreated: 1, paidOrders: 1 },
        { date: '2026-10-10', ordersCreated: 1, paidOrders: 1 },
      ],
      monthly: MONTHS_OF_SEPT30_TO_OCT10,
    });
  });

  it('includes both edges of a range and nothing outside', async () => {
    expect((await get('/analytics/revenue?from=2026-09-10&to=2026-09-10')).body).toEqual({
      totalRevenue: 59.97,
      daily: [{ date: '2026-09-10', revenue: 59.97, paidOrders: 1 }],
      monthly: [{ month: '2026-09', revenue: 59.97, paidOrders: 1, ordersCreated: 1 }],
    });
    expect((await get('/analytics/revenue?from=2026-09-11&to=2026-09-14')).body).toEqual({ totalRevenue: 0, daily: [], monthly: [] });
  });

  it('defaults to the 30 days up to today', async () => {
    const { from, to } = resolveRange(undefined, undefined);
    expect((await get('/analytics/revenue')).body).toEqual((await get(`/analytics/revenue?from=${from}&to=${to}`)).body);
    expect((await get('/analytics/orders?to=2026-10-31')).body).toEqual((await get('/analytics/orders?from=2026-10-01&to=2026-10-31')).body);
    expect((await get('/analytics/orders?to=2026-10-31')).body.daily[0].date).toBe('2026-10-01');
  });

  it('answers 400 for reversed dates and for a date that is not one', async () => {
    expectEnvelope(await get('/analytics/revenue?from=2026-10-10&to=2026-10-09'), 400);
    expectEnvelope(await get('/analytics/revenue?from=abc'), 400);
    expectEnvelope(await get('/analytics/orders?to=2026-02-30'), 400);
    expectEnvelope(await get('/analytics/revenue/daily?from=2026-9-1'), 400);
  });

  it('is for admins only: 401 anonymous, 403 for a USER', async () => {
    const user = await registeredUser(stack);
    for (const path of [
      '/analytics/dashboard',
      '/analytics/revenue',
      '/analytics/revenue/daily',
      '/analytics/revenue/monthly',
      '/analytics/orders',
      '/analytics/books',
      '/analytics/payments',
    ]) {
      expectEnvelope(await request(stack.urls.analytics).get(path), 401, 'Authentication is required to access this resource');
      expectEnvelope(await request(stack.urls.analytics).get(path).set('Authorization', user.bearer), 403, 'Admin role is required to access analytics');
    }
    expect((await request(stack.urls.analytics).get('/actuator/health')).status).toBe(200);
    expect((await request(stack.urls.analytics).get('/actuator/info')).status).toBe(200);
  });
});

describe('rounding', () => {
  it('rounds half-up to two decimals', () => {
    expect(ratioHalfUp(10_000, 3, 1)).toBe(3333); // 100.00 over 3 paid orders: 33.33
    expect(ratioHalfUp(2, 3, 10_000)).toBe(6667); // 2 paid, 1 failed: 66.67 %
    expect(ratioHalfUp(1, 8, 10_000)).toBe(1250);
    expect(ratioHalfUp(5, 0, 1)).toBe(0);
    expect(ratioHalfUp(1, 8, 100)).toBe(13); // 12.5 rounds half-up
  });
});

describe('figures on small and empty data', () => {
  let stack: Stack;
  let admin: string;
  beforeAll(async () => {
    stack = await startStack({ services: ['analytics'] });
    admin = (await adminSession(stack)).bearer;
  });
  afterAll(async () => {
    await stack?.stop();
  });
  const get = (path: string) => request(stack.urls.analytics).get(path).set('Authorization', admin);

  it('answers zeros on a fresh install', async () => {
    expect((await get('/analytics/dashboard')).body).toEqual(EMPTY_DASHBOARD);
    expect((await get('/analytics/books')).body).toEqual({ booksSold: 0, topBooks: [] });
  });

  it('gives 33.33 for 100.00 over three orders, and the success rate of paid over paid and failed', async () => {
    const paid = [33.33, 33.33, 33.34].map((amount) => events(randomUUID(), amount, [item(A, 1, amount)]));
    const failed = events(randomUUID(), 10, [item(B, 1, 10)]);
    await publish(stack, [...paid.map((p) => p.success('2026-11-01')), failed.failed('2026-11-01')]);
    const dashboard = await dashboardWhen(stack, admin, (d) => d.paidOrders === 3 && d.failedPayments === 1);
    expect(dashboard.totalRevenue).toBe(100);
    expect(dashboard.averageOrderValue).toBe(33.33);
    expect(dashboard.paymentSuccessRate).toBe(75);
    const another = events(randomUUID(), 10, [item(B, 1, 10)]);
    await publish(stack, [another.failed('2026-11-02')]);
    await dashboardWhen(stack, admin, (d) => d.failedPayments === 2);
    expect((await get('/analytics/payments')).body.paymentSuccessRate).toBe(60);

    // The provider refunded the second attempt's charge before its success was heard of: the money was taken, so it did not fail.
    await publish(stack, [another.refunded('2026-11-02')]);
    await dashboardWhen(stack, admin, (d) => d.failedPayments === 1);
    expect((await get('/analytics/payments')).body).toMatchObject({ paidOrders: 3, failedPayments: 1, paymentSuccessRate: 75, refundedPayments: 0 });
  });

  it('returns the top 10 of 12 books by quantity, ties by revenue then bookId', async () => {
    const sales: Publishable[] = [];
    // Books 11..22: quantities 12..1, except 13 and 14 tie on quantity (revenue decides) and 15 and 16 tie on both (bookId decides).
    const plan: [number, number, number][] = [
      [11, 12, 1],
      [12, 11, 1],
      [13, 10, 1],
      [14, 10, 2],
      [15, 9, 1],
      [16, 9, 1],
      [17, 8, 1],
      [18, 7, 1],
      [19, 6, 1],
      [20, 5, 1],
      [21, 4, 1],
      [22, 3, 1],
    ];
    for (const [n, quantity, price] of plan) sales.push(events(randomUUID(), quantity * price, [item(book(n), quantity, price)]).success('2026-11-03'));
    const before = (await get('/analytics/books')).body.booksSold as number;
    await publish(stack, sales);
    // Events of different payments may be ingested in any order: wait for all twelve.
    const sold = plan.reduce((sum, [, quantity]) => sum + quantity, 0);
    const res = await waitFor(
      async () => {
        const r = await get('/analytics/books');
        return r.body.booksSold === before + sold ? r : undefined;
      },
      { what: 'the twelve sales' },
    );
    expect(res.body.topBooks.map((b: { bookId: string }) => b.bookId)).toEqual([11, 12, 14, 13, 15, 16, 17, 18, 19, 20].map(book));
    expect(res.body.topBooks[2]).toEqual({ bookId: book(14), bookTitle: 'Title 14', quantitySold: 10, revenue: 20 });
  });
});
