/**
 * What analytics knows of one payment, and what that knowledge contributes to the aggregates
 * (CONTRACT §8, §11). Events may arrive in any order and any number of times: each one only fills
 * in the fact, and the aggregates change by (contribution after) − (contribution before).
 */
import { toCents } from '../../platform/money';
import type { EventItem } from '../../platform/events/topics';

export interface FactItem {
  bookId: string;
  bookTitle: string;
  quantity: number;
  priceCents: number;
}

/**
 * One refund that succeeded (`payment-refund-succeeded`); `items` is empty for a refund of an
 * amount. `reversed` once the provider failed it after all (a reversal's `payment-refund-failed`,
 * which may come first): it then counts nothing.
 */
export interface FactRefund {
  refundId: string;
  day: string;
  amountCents: number;
  items: FactItem[];
  reversed?: true;
}

export interface Fact {
  paymentId: string;
  amountCents: number | null;
  items: FactItem[] | null;
  createdDay: string | null;
  paidDay: string | null;
  failedDay: string | null;
  refundedDay: string | null;
  /** The payment's succeeded refunds, by refundId; null until one is known. */
  refunds: FactRefund[] | null;
}

export type FactEvent =
  | { kind: 'created'; paymentId: string; day: string; amount: number; items: EventItem[] }
  | { kind: 'paid'; paymentId: string; day: string; amount: number; items?: EventItem[] }
  | { kind: 'failed'; paymentId: string; day: string; amount: number }
  | { kind: 'refunded'; paymentId: string; day: string; amount: number }
  | { kind: 'refund'; paymentId: string; day: string; refundId: string; amount: number; paymentAmount: number; items: EventItem[] }
  | { kind: 'reversal'; paymentId: string; day: string; refundId: string; amount: number; paymentAmount: number; full: boolean };

export interface DayCounters {
  ordersCreated: number;
  paidOrders: number;
  failedPayments: number;
  revenueCents: number;
  booksSold: number;
  refundedPayments: number;
  refundedCents: number;
  /** Refunds that succeeded on the day (partial or full, from `payment-refund-succeeded`). */
  refunds: number;
  refundsCents: number;
}

export const DAY_COUNTERS: readonly (keyof DayCounters)[] = [
  'ordersCreated',
  'paidOrders',
  'failedPayments',
  'revenueCents',
  'booksSold',
  'refundedPayments',
  'refundedCents',
  'refunds',
  'refundsCents',
];

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
      row = Object.fromEntries(DAY_COUNTERS.map((key) => [key, 0])) as unknown as DayCounters;
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
  return { paymentId, amountCents: null, items: null, createdDay: null, paidDay: null, failedDay: null, refundedDay: null, refunds: null };
}

function factItems(items: EventItem[]): FactItem[] {
  return items.map((item) => ({ bookId: item.bookId.toLowerCase(), bookTitle: item.bookTitle, quantity: item.quantity, priceCents: toCents(item.price) }));
}

const DAY_OF: Record<Exclude<FactEvent['kind'], 'refund' | 'reversal'>, 'createdDay' | 'paidDay' | 'failedDay' | 'refundedDay'> = {
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
  if (event.kind === 'refund') return withRefund(fact, event);
  if (event.kind === 'reversal') return withReversal(fact, event);
  const day = DAY_OF[event.kind];
  const newItems = (event.kind === 'created' || event.kind === 'paid') && event.items && fact.items === null;
  if (fact.amountCents !== null && fact[day] !== null && !newItems) return fact;
  const next: Fact = { ...fact, amountCents: fact.amountCents ?? toCents(event.amount) };
  if (newItems) next.items = factItems(event.items as EventItem[]);
  next[day] ??= event.day;
  return next;
}

/** A refund is recorded once per refundId; the list is kept in refundId order, whatever the order of arrival. */
function withRefund(fact: Fact, event: Extract<FactEvent, { kind: 'refund' }>): Fact {
  const refunds = fact.refunds ?? [];
  if (refunds.some((refund) => refund.refundId === event.refundId)) return fact;
  const refund: FactRefund = { refundId: event.refundId, day: event.day, amountCents: toCents(event.amount), items: factItems(event.items) };
  return {
    ...fact,
    amountCents: fact.amountCents ?? toCents(event.paymentAmount),
    refunds: [...refunds, refund].sort((a, b) => a.refundId.localeCompare(b.refundId)),
  };
}

/**
 * A refund's success undone: its entry marked reversed (made so, if its success is yet to come, so
 * that it never counts). One that took the payment out of REFUNDED takes the full refund back too.
 */
function withReversal(fact: Fact, event: Extract<FactEvent, { kind: 'reversal' }>): Fact {
  const refunds = fact.refunds ?? [];
  const known = refunds.find((refund) => refund.refundId === event.refundId);
  if (known?.reversed && !(event.full && fact.refundedDay !== null)) return fact;
  const reversed: FactRefund = { ...(known ?? { refundId: event.refundId, day: event.day, amountCents: toCents(event.amount), items: [] }), reversed: true };
  return {
    ...fact,
    amountCents: fact.amountCents ?? toCents(event.paymentAmount),
    refundedDay: event.full ? null : fact.refundedDay,
    refunds: [...refunds.filter((refund) => refund.refundId !== event.refundId), reversed].sort((a, b) => a.refundId.localeCompare(b.refundId)),
  };
}

const quantityOf = (items: FactItem[]) => items.reduce((sum, item) => sum + item.quantity, 0);

/**
 * What of a fully refunded payment no refund event covers: a refund made in the provider's own
 * dashboard, or refund events not heard of yet. Per book, the quantity paid less the quantity the
 * refunds gave back (never below zero), at the price paid; the amount likewise. A refunded line of a
 * book the payment's items do not list lowers nothing here.
 */
function uncovered(amountCents: number, items: FactItem[], refunds: FactRefund[]): { amountCents: number; items: FactItem[] } {
  const given = new Map<string, number>();
  for (const item of refunds.flatMap((refund) => refund.items)) given.set(item.bookId, (given.get(item.bookId) ?? 0) + item.quantity);
  const left: FactItem[] = [];
  for (const item of items) {
    const back = Math.min(item.quantity, given.get(item.bookId) ?? 0);
    given.set(item.bookId, (given.get(item.bookId) ?? 0) - back);
    if (item.quantity > back) left.push({ ...item, quantity: item.quantity - back });
  }
  const refunded = refunds.reduce((sum, refund) => sum + refund.amountCents, 0);
  return { amountCents: Math.max(0, amountCents - refunded), items: left };
}

/**
 * Adds `sign` × what `fact` contributes to the aggregates (CONTRACT §11). A paid payment counts on
 * its paid day, whatever follows; each refund then takes its amount and its lines out of the day it
 * succeeded, and a full refund takes the payment out of paidOrders on the day it was refunded,
 * together with whatever of it no refund event covers, so a fully refunded payment nets to zero
 * once all its events are in. Refunds of a payment not known as paid count nothing (yet).
 */
export function contribute(fact: Fact, sign: 1 | -1, deltas: Deltas): void {
  if (fact.createdDay) deltas.addDay(fact.createdDay, { ordersCreated: 1 }, sign);
  const amount = fact.amountCents ?? 0;
  const items = fact.items ?? [];
  const refunds = (fact.refunds ?? []).filter((refund) => !refund.reversed);
  if (fact.paidDay) {
    deltas.addDay(fact.paidDay, { paidOrders: 1, revenueCents: amount, booksSold: quantityOf(items) }, sign);
    for (const item of items) deltas.addBook(item, sign);
    // A refund of an amount (no lines) lowers the day's revenue only: nothing says which book it
    // was for. If a full refund follows, it takes the books out (uncovered, below).
    for (const refund of refunds) {
      deltas.addDay(refund.day, { revenueCents: -refund.amountCents, booksSold: -quantityOf(refund.items), refunds: 1, refundsCents: refund.amountCents }, sign);
      for (const item of refund.items) deltas.addBook(item, -sign);
    }
  }
  // A failure counts only while no success is known for the payment. A full refund is one: the
  // provider gives back only money it took, even when its success arrives after the refund, or
  // never. (Unchanged by §11: a refund-succeeded event alone leaves a failure as it stands.)
  if (fact.failedDay && !fact.paidDay && !fact.refundedDay) deltas.addDay(fact.failedDay, { failedPayments: 1 }, sign);
  if (fact.refundedDay && fact.paidDay) {
    const rest = uncovered(amount, items, refunds);
    deltas.addDay(fact.refundedDay, { paidOrders: -1, refundedPayments: 1, refundedCents: amount, revenueCents: -rest.amountCents, booksSold: -quantityOf(rest.items) }, sign);
    for (const item of rest.items) deltas.addBook(item, -sign);
  }
}
