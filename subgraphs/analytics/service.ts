/**
 * Admin reporting (interface §2.10, §4.3; CONTRACT §8, §11), read from the aggregates only: the
 * cost of a read depends on the days in its range and the number of books, never on the number of
 * events. Revenue is net of refunds, each taken out on the day it succeeded.
 */
import type { Database } from '../../platform/database';
import { fromCents } from '../../platform/money';
import { assertRole, type Principal } from '../../platform/auth';
import { badRequest } from '../../platform/errors';
import { BookSales, DailyAggregate } from './entities';
import { DAY_COUNTERS, type DayCounters } from './facts';

export const ADMIN_ONLY = 'Admin role is required to access analytics';
const DEFAULT_RANGE_DAYS = 30;
const TOP_BOOKS = 10;

export interface DateRange {
  from: string;
  to: string;
}

export interface DailyRevenueItem {
  date: string;
  revenue: number;
  paidOrders: number;
}

export interface MonthlyRevenueItem {
  month: string;
  revenue: number;
  paidOrders: number;
  ordersCreated: number;
}

export interface DailyOrderItem {
  date: string;
  ordersCreated: number;
  paidOrders: number;
}

export interface TopBookItem {
  bookId: string;
  bookTitle: string;
  quantitySold: number;
  revenue: number;
}

/** `to` defaults to today (UTC), `from` to 30 days before `to`; both inclusive; `from` after `to` is 400. */
export function resolveRange(from: string | undefined, to: string | undefined, today = new Date()): DateRange {
  const end = to ?? today.toISOString().slice(0, 10);
  const start = from ?? new Date(Date.parse(`${end}T00:00:00Z`) - DEFAULT_RANGE_DAYS * 86_400_000).toISOString().slice(0, 10);
  if (start > end) throw badRequest(`from (${start}) must not be after to (${end})`, 'INVALID_DATE_RANGE');
  return { from: start, to: end };
}

/** a ÷ b rounded half-up to `places` decimals, for non-negative integers; 0 when b is 0. */
export function ratioHalfUp(a: number, b: number, scale: number): number {
  if (b === 0) return 0;
  // Integer arithmetic: round(a × scale ÷ b) = floor((2 × a × scale + b) ÷ (2 × b)).
  return Math.floor((2 * a * scale + b) / (2 * b));
}

const hasActivity = (row: DailyAggregate) => DAY_COUNTERS.some((key) => row[key] !== 0);

/** CONTRACT §8: paid / (paid + failed) as a percentage with two decimals, 0 before any payment. */
function paymentSuccessRate(t: { paidOrders: number; failedPayments: number }): number {
  return fromCents(ratioHalfUp(t.paidOrders, t.paidOrders + t.failedPayments, 10_000));
}

function toTopBook(row: BookSales): TopBookItem {
  return { bookId: row.bookId, bookTitle: row.bookTitle, quantitySold: row.quantitySold, revenue: fromCents(row.revenueCents) };
}

export class AnalyticsService {
  constructor(private readonly db: Database) {}

  private async totals(): Promise<DayCounters> {
    const [row] = await this.db.manager.query<Record<keyof DayCounters, string | number>[]>(
      `SELECT COALESCE(SUM(orders_created), 0) AS ordersCreated, COALESCE(SUM(paid_orders), 0) AS paidOrders,
              COALESCE(SUM(failed_payments), 0) AS failedPayments, COALESCE(SUM(revenue_cents), 0) AS revenueCents,
              COALESCE(SUM(books_sold), 0) AS booksSold, COALESCE(SUM(refunded_payments), 0) AS refundedPayments,
              COALESCE(SUM(refunded_cents), 0) AS refundedCents, COALESCE(SUM(refunds), 0) AS refunds,
              COALESCE(SUM(refunds_cents), 0) AS refundsCents
         FROM analytics_daily`,
    );
    return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)])) as unknown as DayCounters;
  }

  private async days(range: DateRange): Promise<DailyAggregate[]> {
    const rows = await this.db.manager.createQueryBuilder(DailyAggregate, 'd').where('d.day >= :from AND d.day <= :to', range).orderBy('d.day', 'ASC').getMany();
    return rows.filter(hasActivity);
  }

  private static monthly(rows: DailyAggregate[]): MonthlyRevenueItem[] {
    const months = new Map<string, { revenueCents: number; paidOrders: number; ordersCreated: number }>();
    for (const row of rows) {
      const month = row.day.slice(0, 7);
      const sum = months.get(month) ?? { revenueCents: 0, paidOrders: 0, ordersCreated: 0 };
      sum.revenueCents += row.revenueCents;
      sum.paidOrders += row.paidOrders;
      sum.ordersCreated += row.ordersCreated;
      months.set(month, sum);
    }
    return [...months.entries()].map(([month, sum]) => ({ month, revenue: fromCents(sum.revenueCents), paidOrders: sum.paidOrders, ordersCreated: sum.ordersCreated }));
  }

  private static daily(rows: DailyAggregate[]): DailyRevenueItem[] {
    return rows.map((row) => ({ date: row.day, revenue: fromCents(row.revenueCents), paidOrders: row.paidOrders }));
  }

  /**
   * All-time figures. totalRevenue is net of refunds and averageOrderValue is it over the payments
   * still paid; totalRefunds and refundedAmount count the refunds that succeeded (partial or full,
   * `payment-refund-succeeded`). A payment refunded in the provider's own dashboard has no such
   * event: it leaves revenue and paidOrders all the same, and shows in the payment report's
   * refundedPayments and refundedAmount (payments refunded in full, at their amount).
   */
  async dashboard(principal: Principal) {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    const t = await this.totals();
    return {
      totalOrders: t.ordersCreated,
      paidOrders: t.paidOrders,
      failedPayments: t.failedPayments,
      totalRevenue: fromCents(t.revenueCents),
      averageOrderValue: fromCents(ratioHalfUp(t.revenueCents, t.paidOrders, 1)),
      booksSold: t.booksSold,
      paymentSuccessRate: paymentSuccessRate(t),
      totalRefunds: t.refunds,
      refundedAmount: fromCents(t.refundsCents),
    };
  }

  async revenue(principal: Principal, range: DateRange) {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    const rows = await this.days(range);
    return {
      totalRevenue: fromCents(rows.reduce((sum, row) => sum + row.revenueCents, 0)),
      daily: AnalyticsService.daily(rows),
      monthly: AnalyticsService.monthly(rows),
    };
  }

  async revenueDaily(principal: Principal, range: DateRange): Promise<DailyRevenueItem[]> {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    return AnalyticsService.daily(await this.days(range));
  }

  async revenueMonthly(principal: Principal, range: DateRange): Promise<MonthlyRevenueItem[]> {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    return AnalyticsService.monthly(await this.days(range));
  }

  async orders(principal: Principal, range: DateRange) {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    const rows = await this.days(range);
    return {
      totalOrders: rows.reduce((sum, row) => sum + row.ordersCreated, 0),
      paidOrders: rows.reduce((sum, row) => sum + row.paidOrders, 0),
      daily: rows.map((row): DailyOrderItem => ({ date: row.day, ordersCreated: row.ordersCreated, paidOrders: row.paidOrders })),
      monthly: AnalyticsService.monthly(rows),
    };
  }

  async books(principal: Principal) {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    const [{ booksSold }, top] = await Promise.all([this.totals(), this.topBooks(TOP_BOOKS)]);
    return { booksSold, topBooks: top };
  }

  /** Best sellers by quantity, ties by revenue then bookId. */
  async topBooks(limit: number): Promise<TopBookItem[]> {
    const rows = await this.db.manager
      .createQueryBuilder(BookSales, 'b')
      .where('b.quantity_sold > 0')
      .orderBy('b.quantity_sold', 'DESC')
      .addOrderBy('b.revenue_cents', 'DESC')
      .addOrderBy('b.book_id', 'ASC')
      .take(limit)
      .getMany();
    return rows.map(toTopBook);
  }

  /** Sales of the given books (zero for a book never sold), for `Book.sales` in the supergraph. */
  async salesOf(principal: Principal, bookIds: readonly string[]): Promise<Map<string, TopBookItem>> {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    const rows =
      bookIds.length === 0
        ? []
        : await this.db.manager
            .createQueryBuilder(BookSales, 'b')
            .where('b.book_id IN (:...ids)', { ids: [...bookIds] })
            .getMany();
    return new Map(rows.map((row) => [row.bookId, toTopBook(row)]));
  }

  /** refundedPayments/refundedAmount: payments refunded in full; totalRefunds/totalRefundedAmount: every refund that succeeded. */
  async payments(principal: Principal) {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    const t = await this.totals();
    return {
      paidOrders: t.paidOrders,
      failedPayments: t.failedPayments,
      paymentSuccessRate: paymentSuccessRate(t),
      refundedPayments: t.refundedPayments,
      refundedAmount: fromCents(t.refundedCents),
      totalRefunds: t.refunds,
      totalRefundedAmount: fromCents(t.refundsCents),
    };
  }
}
