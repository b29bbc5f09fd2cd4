/**
 * What analytics knows of one payment, and what that knowledge contributes to the aggregates
 * (CONTRACT §8). Events may arrive in any order and any number of times: each one only fills in
 * the fact, and the aggregates change by (contribution after) − (contribution before).
 */
import { toCents } from '../../platform/money';
import type { EventItem } from '../../platform/events/topics';

export interface FactItem {
  bookId: string;
  bookTitle: string;
  quantity: number;
  priceCents: number;
}

export interface Fact {
  paymentId: string;
  amountCents: number | null;
  items: FactItem[] | null;
  createdDay: string | null;
  paidDay: string | null;
  failedDay: string | null;
  refundedDay: string | null;
}

export type FactEvent =
  | { kind: 'created'; paymentId: string; day: string; amount: number; items: EventItem[] }
  | { kind: 'paid'; paymentId: string; day: string; amount: number; items?: EventItem[] }
  | { kind: 'failed'; paymentId: string; day: string; amount: number }
  | { kind: 'refunded'; paymentId: string; day: string; amount: number };

export interface DayCounters {
  ordersCreated: number;
  paidOrders: number;
  failedPayments: number;
  revenueCents: number;
  booksSold: number;
  refundedPayments: number;
  refundedCents: number;
}

export const DAY_COUNTERS: readonly (keyof DayCounters)[] = ['ordersCreated', 'paidOrders', 'failedPayments', 'revenueCents', 'booksSold', 'refundedPayments', 'refundedCents'];

export interface BookCounters {
  bookTitle: string;
  quantitySold: number;
  revenueCents: number;
}

/** Summed changes to the aggregates, keyed by day and by book. */
export class Deltas {
  readonly days = new Map<string, DayCounters>();
  readonly books = new Map<string, BookCounters>();

  addDay(day: string, counters: Partial<DayCounters>, sign: number): void {
    let row = this.days.get(day);
    if (!row) {
      row = { ordersCreated: 0, paidOrders: 0, failedPayments: 0, revenueCents: 0, booksSold: 0, refundedPayments: 0, refundedCents: 0 };
      this.days.set(day, row);
    }
    for (const key of DAY_COUNTERS) row[key] += sign * (counters[key] ?? 0);
  }

  addBook(item: FactItem, sign: number): void {
    const row = this.books.get(item.bookId) ?? { bookTitle: item.bookTitle, quantitySold: 0, revenueCents: 0 };
    row.bookTitle = item.bookTitle;
    row.quantitySold += sign * item.quantity;
    row.revenueCents += sign * item.quantity * item.priceCents;
    this.books.set(item.bookId, row);
  }
}

/** The UTC date of an ISO-8601 instant, e.g. 2026-11-21T23:30:00-02:00 → 2026-11-22. */
export function utcDay(instant: string): string {
  return new Date(instant).toISOString().slice(0, 10);
}

export function emptyFact(paymentId: string): Fact {
  return { paymentId, amountCents: null, items: null, createdDay: null, paidDay: null, failedDay: null, refundedDay: null };
}

function factItems(items: EventItem[]): FactItem[] {
  return items.map((item) => ({ bookId: item.bookId.toLowerCase(), bookTitle: item.bookTitle, quantity: item.quantity, priceCents: toCents(item.price) }));
}

const DAY_OF: Record<FactEvent['kind'], 'createdDay' | 'paidDay' | 'failedDay' | 'refundedDay'> = {
  created: 'createdDay',
  paid: 'paidDay',
  failed: 'failedDay',
  refunded: 'refundedDay',
};

/**
 * The fact once `event` is known; the first report of each thing wins, so redelivery changes
 * nothing: then `fact` itself comes back (the same object), which tells the caller there is nothing
 * to write.
 */
export function withEvent(fact: Fact, event: FactEvent): Fact {
  const day = DAY_OF[event.kind];
  const newItems = (event.kind === 'created' || event.kind === 'paid') && event.items && fact.items === null;
  if (fact.amountCents !== null && fact[day] !== null && !newItems) return fact;
  const next: Fact = { ...fact, amountCents: fact.amountCents ?? toCents(event.amount) };
  if (newItems) next.items = factItems(event.items as EventItem[]);
  next[day] ??= event.day;
  return next;
}

/** Adds `sign` × what `fact` contributes to the aggregates. */
export function contribute(fact: Fact, sign: 1 | -1, deltas: Deltas): void {
  if (fact.createdDay) deltas.addDay(fact.createdDay, { ordersCreated: 1 }, sign);
  const amount = fact.amountCents ?? 0;
  const items = fact.items ?? [];
  if (fact.paidDay && !fact.refundedDay) {
    const booksSold = items.reduce((sum, item) => sum + item.quantity, 0);
    deltas.addDay(fact.paidDay, { paidOrders: 1, revenueCents: amount, booksSold }, sign);
    for (const item of items) deltas.addBook(item, sign);
  }
  // A failure counts only while no success is known for the payment. A refund is one: the provider
  // gives back only money it took, even when its success arrives after the refund, or never.
  if (fact.failedDay && !fact.paidDay && !fact.refundedDay) deltas.addDay(fact.failedDay, { failedPayments: 1 }, sign);
  if (fact.refundedDay && fact.paidDay) deltas.addDay(fact.refundedDay, { refundedPayments: 1, refundedCents: amount }, sign);
}
