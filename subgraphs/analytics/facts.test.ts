/**
 * The refund rule (CONTRACT §11) on the facts alone: what each day and each book end up with once a
 * payment's events are folded in, in any order and any number of times.
 */
import type { EventItem } from '../../platform/events/topics';
import { Deltas, contribute, emptyFact, withEvent, type Fact, type FactEvent } from './facts';

const PAYMENT = 'pay-1';
const A = 'book-a';
const B = 'book-b';
const line = (bookId: string, quantity: number, price: number): EventItem => ({ bookId, bookTitle: bookId, quantity, price });
/** 100.00: two of A at 30.00, one of B at 40.00. */
const LINES = [line(A, 2, 30), line(B, 1, 40)];

const paid = (day: string): FactEvent => ({ kind: 'paid', paymentId: PAYMENT, day, amount: 100, items: LINES });
const created = (day: string): FactEvent => ({ kind: 'created', paymentId: PAYMENT, day, amount: 100, items: LINES });
const refunded = (day: string): FactEvent => ({ kind: 'refunded', paymentId: PAYMENT, day, amount: 100 });
const refund = (refundId: string, day: string, amount: number, items: EventItem[] = []): FactEvent => ({
  kind: 'refund',
  paymentId: PAYMENT,
  day,
  refundId,
  amount,
  paymentAmount: 100,
  items,
});

/** The aggregates `events` leave, applied one at a time as ingest does; zero rows left out. */
function aggregates(events: FactEvent[]) {
  const deltas = new Deltas();
  let fact: Fact = emptyFact(PAYMENT);
  for (const event of events) {
    const next = withEvent(fact, event);
    contribute(fact, -1, deltas);
    contribute(next, 1, deltas);
    fact = next;
  }
  const days = Object.fromEntries(
    [...deltas.days.entries()]
      .map(([day, counters]) => [day, Object.fromEntries(Object.entries(counters).filter(([, value]) => value !== 0))] as const)
      .filter(([, counters]) => Object.keys(counters).length > 0)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  const books = Object.fromEntries([...deltas.books.entries()].map(([bookId, sales]) => [bookId, { quantitySold: sales.quantitySold, revenueCents: sales.revenueCents }]));
  return { days, books };
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((first, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [first, ...rest]));
}

describe('a partial refund', () => {
  it('comes out of the day it succeeded, not the day the payment was paid', () => {
    expect(aggregates([paid('2026-11-01'), refund('r1', '2026-11-05', 30, [line(A, 1, 30)])])).toEqual({
      days: {
        '2026-11-01': { paidOrders: 1, revenueCents: 10_000, booksSold: 3 },
        '2026-11-05': { revenueCents: -3000, booksSold: -1, refunds: 1, refundsCents: 3000 },
      },
      books: { [A]: { quantitySold: 1, revenueCents: 3000 }, [B]: { quantitySold: 1, revenueCents: 4000 } },
    });
  });

  it('of an amount lowers the day revenue only: no book says which one it was for', () => {
    expect(aggregates([paid('2026-11-01'), refund('r1', '2026-11-05', 12.5)]).days['2026-11-05']).toEqual({ revenueCents: -1250, refunds: 1, refundsCents: 1250 });
  });

  it('counts nothing for a payment never paid, and counts once it is', () => {
    const unpaid = aggregates([created('2026-11-01'), refund('r1', '2026-11-05', 30, [line(A, 1, 30)])]);
    expect(unpaid).toEqual({ days: { '2026-11-01': { ordersCreated: 1 } }, books: {} });
    expect(aggregates([created('2026-11-01'), refund('r1', '2026-11-05', 30, [line(A, 1, 30)]), paid('2026-11-01')]).days['2026-11-05']).toEqual({
      revenueCents: -3000,
      booksSold: -1,
      refunds: 1,
      refundsCents: 3000,
    });
  });

  it('redelivered changes nothing', () => {
    const once = [paid('2026-11-01'), refund('r1', '2026-11-05', 30, [line(A, 1, 30)])];
    expect(aggregates([...once, ...once, refund('r1', '2026-11-05', 30, [line(A, 1, 30)])])).toEqual(aggregates(once));
  });
});

describe('partial refunds and then the full refund', () => {
  const r1 = refund('r1', '2026-11-05', 30, [line(A, 1, 30)]);
  const r2 = refund('r2', '2026-11-06', 10);
  /** The rest, the refund that made the payment REFUNDED (full=true), with `payment-refunded` the same day. */
  const r3 = refund('r3', '2026-11-07', 60, [line(A, 1, 30), line(B, 1, 40)]);
  const nets = (result: ReturnType<typeof aggregates>) => {
    const days = Object.values(result.days);
    return {
      revenueCents: days.reduce((sum, day) => sum + (day.revenueCents ?? 0), 0),
      booksSold: days.reduce((sum, day) => sum + (day.booksSold ?? 0), 0),
      paidOrders: days.reduce((sum, day) => sum + (day.paidOrders ?? 0), 0),
    };
  };

  it('nets to zero revenue and books, and takes the payment out of paidOrders on the refund day', () => {
    const result = aggregates([created('2026-11-01'), paid('2026-11-01'), r1, r2, r3, refunded('2026-11-07')]);
    expect(nets(result)).toEqual({ revenueCents: 0, booksSold: 0, paidOrders: 0 });
    expect(result.days['2026-11-07']).toEqual({ paidOrders: -1, revenueCents: -6000, booksSold: -2, refunds: 1, refundsCents: 6000, refundedPayments: 1, refundedCents: 10_000 });
    expect(result.books).toEqual({ [A]: { quantitySold: 0, revenueCents: 0 }, [B]: { quantitySold: 0, revenueCents: 0 } });
  });

  it('takes what no refund event covers out of the refund day (a refund made in the provider dashboard)', () => {
    const result = aggregates([paid('2026-11-01'), r1, r2, refunded('2026-11-07')]);
    expect(nets(result)).toEqual({ revenueCents: 0, booksSold: 0, paidOrders: 0 });
    // 100 − 30 − 10 left; A × 1 and B × 1 not given back by a refund of lines.
    expect(result.days['2026-11-07']).toEqual({ paidOrders: -1, revenueCents: -6000, booksSold: -2, refundedPayments: 1, refundedCents: 10_000 });
    expect(result.books).toEqual({ [A]: { quantitySold: 0, revenueCents: 0 }, [B]: { quantitySold: 0, revenueCents: 0 } });
  });

  it('does not count twice the refunds whose events arrive after payment-refunded', () => {
    const late = aggregates([paid('2026-11-01'), refunded('2026-11-07'), r1, r2, r3]);
    expect(late).toEqual(aggregates([paid('2026-11-01'), r1, r2, r3, refunded('2026-11-07')]));
    expect(nets(late)).toEqual({ revenueCents: 0, booksSold: 0, paidOrders: 0 });
  });

  it('gives the same aggregates whatever the order of the events, each delivered twice', () => {
    const all = [created('2026-11-01'), paid('2026-11-01'), r1, r2, r3, refunded('2026-11-07')];
    const expected = aggregates(all);
    for (const order of permutations(all)) expect(aggregates([...order, ...[...order].reverse()])).toEqual(expected);
  });
});
