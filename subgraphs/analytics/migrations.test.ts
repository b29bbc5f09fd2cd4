/**
 * Upgrading a database that holds figures kept under the rule before CONTRACT §11: the migration
 * adds the refund columns and recomputes the aggregates, so a refunded payment counts on the day it
 * was paid and comes out of the day it was refunded.
 */
import { openDatabase } from '../../platform/database';
import { EVENT_ENTITIES, EVENT_MIGRATIONS } from '../../platform/events/tables';
import { dropDatabases, testConfig } from '../../test/stack';
import { BookSales, DailyAggregate, PaymentFact } from './entities';
import { analyticsDatabase } from './index';
import { CreateAnalytics1732000000600 } from './migrations/1732000000600-CreateAnalytics';

const config = testConfig();
afterAll(() => dropDatabases(config, ['analytics']));

it('recomputes the figures of refunded payments under the refund-day rule', async () => {
  const before = await openDatabase({
    service: 'analytics',
    config,
    entities: [PaymentFact, DailyAggregate, BookSales, ...EVENT_ENTITIES],
    migrations: [...EVENT_MIGRATIONS, CreateAnalytics1732000000600],
  });
  const items = (quantity: number, priceCents: number) => JSON.stringify([{ bookId: 'b1', bookTitle: 'Emma', quantity, priceCents }]);
  await before.manager.query(
    `INSERT INTO analytics_payment_facts (payment_id, amount_cents, items, paid_day, refunded_day) VALUES ('p1', 3000, ?, '2026-09-01', '2026-09-05'), ('p2', 1500, ?, '2026-09-02', NULL)`,
    [items(2, 1500), items(1, 1500)],
  );
  // What the old rule kept: p1 nowhere but its refund, p2 on the day it was paid.
  await before.manager.query(
    `INSERT INTO analytics_daily (day, orders_created, paid_orders, failed_payments, revenue_cents, books_sold, refunded_payments, refunded_cents)
     VALUES ('2026-09-02', 0, 1, 0, 1500, 1, 0, 0), ('2026-09-05', 0, 0, 0, 0, 0, 1, 3000)`,
  );
  await before.manager.query(`INSERT INTO analytics_book_sales (book_id, book_title, quantity_sold, revenue_cents) VALUES ('b1', 'Emma', 1, 1500)`);
  await before.close();

  const after = await analyticsDatabase(config);
  try {
    const days = await after.manager.find(DailyAggregate, { order: { day: 'ASC' } });
    expect(
      days.map(({ day, paidOrders, revenueCents, booksSold, refundedPayments, refundedCents, refunds }) => ({
        day,
        paidOrders,
        revenueCents,
        booksSold,
        refundedPayments,
        refundedCents,
        refunds,
      })),
    ).toEqual([
      { day: '2026-09-01', paidOrders: 1, revenueCents: 3000, booksSold: 2, refundedPayments: 0, refundedCents: 0, refunds: 0 },
      { day: '2026-09-02', paidOrders: 1, revenueCents: 1500, booksSold: 1, refundedPayments: 0, refundedCents: 0, refunds: 0 },
      { day: '2026-09-05', paidOrders: -1, revenueCents: -3000, booksSold: -2, refundedPayments: 1, refundedCents: 3000, refunds: 0 },
    ]);
    expect(await after.manager.find(BookSales)).toEqual([{ bookId: 'b1', bookTitle: 'Emma', quantitySold: 1, revenueCents: 1500 }]);
  } finally {
    await after.close();
  }
});
