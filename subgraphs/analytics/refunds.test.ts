/**
 * Partial refunds in the figures (CONTRACT §11): each refund comes out of revenue and booksSold on
 * the day it succeeded, a full refund also out of paidOrders, and the dashboard counts the refunds.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { In } from 'typeorm';
import { ProcessedEvent, consumerGroupOf } from '../../platform/events/consumer';
import { EMPTY_DASHBOARD, book, dashboardWhen, events, item, publish, type Publishable } from '../../test/analytics-events';
import { graphql } from '../../test/graphql';
import { adminSession, startStack, waitFor, type Stack } from '../../test/harness';
import { rebuildAggregates } from './ingest';

const [A, B, C] = [31, 32, 33].map(book);

let stack: Stack;
let admin: string;
beforeAll(async () => {
  stack = await startStack({ services: ['analytics'] });
  admin = (await adminSession(stack)).bearer;
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const get = async (path: string) => (await request(stack.urls.analytics).get(path).set('Authorization', admin)).body;
const DECEMBER = '/analytics/revenue/daily?from=2026-12-01&to=2026-12-31';

/** Everything a refund can move, to compare before and after. */
const figures = async () => ({
  dashboard: await get('/analytics/dashboard'),
  payments: await get('/analytics/payments'),
  books: await get('/analytics/books'),
  december: await get(DECEMBER),
});

/** Publishes `items` and waits until analytics has applied each of them (or found it a duplicate). */
async function ingested(items: Publishable[]): Promise<void> {
  await publish(stack, items);
  const ids = items.map(({ event }) => event.eventId);
  const db = stack.services.analytics!.db;
  await waitFor(async () => (await db.manager.count(ProcessedEvent, { where: { consumer: consumerGroupOf('analytics'), eventId: In(ids) } })) === new Set(ids).size, {
    what: 'analytics to ingest the events',
  });
}

/** The same events under new event ids, as a producer retry sends them. */
const again = (items: Publishable[]) => items.map(({ topic, event }) => ({ topic, event: { ...event, eventId: randomUUID() } }));

// 100.00 paid on 12-01 for two of A at 30.00 and one of B at 40.00.
const p = events(randomUUID(), 100, [item(A, 2, 30), item(B, 1, 40)]);
const r1 = p.refundSucceeded('2026-12-03', { amount: 30, refundedAmount: 30, lines: [item(A, 1, 30)] });
const r2 = p.refundSucceeded('2026-12-04', { amount: 10, refundedAmount: 40, lines: [] });
const r3 = p.refundSucceeded('2026-12-05', { amount: 60, refundedAmount: 100, lines: [item(A, 1, 30), item(B, 1, 40)], full: true });
const full = p.refunded('2026-12-05');

describe('partial refunds of one payment, then its full refund', () => {
  it('takes a partial refund out of the day it succeeded, not the day it was paid', async () => {
    await publish(stack, [p.created('2026-12-01'), p.success('2026-12-01'), r1]);
    const dashboard = await dashboardWhen(stack, admin, (d) => d.paidOrders === 1 && d.totalOrders === 1 && d.totalRefunds === 1);
    expect(dashboard).toEqual({
      ...EMPTY_DASHBOARD,
      totalOrders: 1,
      paidOrders: 1,
      totalRevenue: 70,
      averageOrderValue: 70,
      booksSold: 2,
      paymentSuccessRate: 100,
      totalRefunds: 1,
      refundedAmount: 30,
    });
    expect(await get(DECEMBER)).toEqual([
      { date: '2026-12-01', revenue: 100, paidOrders: 1 },
      { date: '2026-12-03', revenue: -30, paidOrders: 0 },
    ]);
    expect((await get('/analytics/books')).topBooks).toEqual([
      { bookId: B, bookTitle: 'Title 32', quantitySold: 1, revenue: 40 },
      { bookId: A, bookTitle: 'Title 31', quantitySold: 1, revenue: 30 },
    ]);
  });

  it('shows the refunds in GraphQL as in REST', async () => {
    const res = await graphql(stack.urls.analytics, '{ dashboard { totalRevenue booksSold totalRefunds refundedAmount } paymentReport { totalRefunds totalRefundedAmount } }', {
      bearer: admin,
    });
    expect(res.body).toEqual({
      data: { dashboard: { totalRevenue: '70.00', booksSold: 2, totalRefunds: 1, refundedAmount: '30.00' }, paymentReport: { totalRefunds: 1, totalRefundedAmount: '30.00' } },
    });
  });

  it('nets the payment to zero once refunded in full, paidOrders down on the day of the refund', async () => {
    await ingested([r2, r3, full]);
    expect(await get('/analytics/dashboard')).toEqual({ ...EMPTY_DASHBOARD, totalOrders: 1, totalRefunds: 3, refundedAmount: 100 });
    expect(await get(DECEMBER)).toEqual([
      { date: '2026-12-01', revenue: 100, paidOrders: 1 },
      { date: '2026-12-03', revenue: -30, paidOrders: 0 },
      { date: '2026-12-04', revenue: -10, paidOrders: 0 },
      { date: '2026-12-05', revenue: -60, paidOrders: -1 },
    ]);
    expect(await get('/analytics/payments')).toEqual({
      paidOrders: 0,
      failedPayments: 0,
      paymentSuccessRate: 0,
      refundedPayments: 1,
      refundedAmount: 100,
      totalRefunds: 3,
      totalRefundedAmount: 100,
    });
    expect(await get('/analytics/books')).toEqual({ booksSold: 0, topBooks: [] });
  });

  it('gives the same figures when every event comes again, in reverse order', async () => {
    const before = await figures();
    await ingested(again([p.created('2026-12-01'), p.success('2026-12-01'), r1, r2, r3, full]).reverse());
    expect(await figures()).toEqual(before);
  });

  it('gives the same figures when rebuilt from the facts', async () => {
    const before = await figures();
    const db = stack.services.analytics!.db;
    await db.transaction((manager) => rebuildAggregates(manager, db.kind));
    expect(await figures()).toEqual(before);
  });
});

describe('refund events that arrive late, or for a payment never paid', () => {
  it('does not count twice a refund whose event arrives after payment-refunded', async () => {
    const q = events(randomUUID(), 50, [item(C, 1, 50)]);
    await ingested([q.success('2026-12-10'), q.refunded('2026-12-12')]);
    const refundedOnly = await figures();
    expect(refundedOnly.december).toContainEqual({ date: '2026-12-12', revenue: -50, paidOrders: -1 });
    await ingested([q.refundSucceeded('2026-12-12', { amount: 50, refundedAmount: 50, lines: [item(C, 1, 50)], full: true })]);
    const after = await figures();
    expect(after.dashboard).toEqual({
      ...refundedOnly.dashboard,
      totalRefunds: refundedOnly.dashboard.totalRefunds + 1,
      refundedAmount: refundedOnly.dashboard.refundedAmount + 50,
    });
    expect(after.december).toEqual(refundedOnly.december);
    expect(after.books).toEqual(refundedOnly.books);
  });

  it('counts nothing for a refund of a payment never paid', async () => {
    const before = await figures();
    const u = events(randomUUID(), 20, [item(C, 1, 20)]);
    await ingested([u.refundSucceeded('2026-12-20', { amount: 20, refundedAmount: 20, lines: [item(C, 1, 20)], full: true })]);
    expect(await figures()).toEqual(before);
  });
});
