/**
 * Ingestion: a batch of payment events becomes, in one transaction, updated facts and additive
 * multi-row upserts of the daily and per-book aggregates. Rows are written in key order so that
 * concurrent batches lock them in the same order.
 */
import type { EntityManager } from 'typeorm';
import type { DatabaseKind } from '../../platform/database';
import { DAY_COUNTERS, Deltas, contribute, emptyFact, withEvent, type Fact, type FactEvent } from './facts';
import { PaymentFact } from './entities';

/**
 * Placeholders per statement: a batch's rows in one round trip per table, under the limits of both
 * databases (32,766 in SQLite, 65,535 in MySQL).
 */
const MAX_PLACEHOLDERS = 30_000;
/** Ids per statement, and facts per page when rebuilding. */
const CHUNK = 5000;

function chunks<T>(rows: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

const DAY_COLUMNS: Record<string, string> = {
  ordersCreated: 'orders_created',
  paidOrders: 'paid_orders',
  failedPayments: 'failed_payments',
  revenueCents: 'revenue_cents',
  booksSold: 'books_sold',
  refundedPayments: 'refunded_payments',
  refundedCents: 'refunded_cents',
  refunds: 'refunds',
  refundsCents: 'refunds_cents',
};

/**
 * INSERT of many rows that, on an existing key, adds `added` columns and overwrites `replaced`
 * ones, or leaves the row as it is when neither is given; the two dialects spell it differently.
 */
export async function upsert(
  manager: EntityManager,
  kind: DatabaseKind,
  table: string,
  key: string,
  columns: string[],
  rows: unknown[][],
  changes: { added?: string[]; replaced?: string[] },
): Promise<void> {
  for (const part of chunks(rows, Math.floor(MAX_PLACEHOLDERS / columns.length))) {
    const placeholders = part.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ');
    const set =
      kind === 'mysql'
        ? [...(changes.added ?? []).map((c) => `${c} = ${c} + VALUES(${c})`), ...(changes.replaced ?? []).map((c) => `${c} = VALUES(${c})`)]
        : [...(changes.added ?? []).map((c) => `${c} = ${c} + excluded.${c}`), ...(changes.replaced ?? []).map((c) => `${c} = excluded.${c}`)];
    if (set.length === 0) {
      await manager.query(`${kind === 'mysql' ? 'INSERT IGNORE INTO' : 'INSERT OR IGNORE INTO'} ${table} (${columns.join(', ')}) VALUES ${placeholders}`, part.flat());
      continue;
    }
    const conflict = kind === 'mysql' ? 'ON DUPLICATE KEY UPDATE' : `ON CONFLICT(${key}) DO UPDATE SET`;
    await manager.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${placeholders} ${conflict} ${set.join(', ')}`, part.flat());
  }
}

const FACT_COLUMNS = ['payment_id', 'amount_cents', 'items', 'created_day', 'paid_day', 'failed_day', 'refunded_day', 'refunds'];

const json = (value: unknown[] | null) => (value ? JSON.stringify(value) : null);

function toRow(fact: Fact): unknown[] {
  return [fact.paymentId, fact.amountCents, json(fact.items), fact.createdDay, fact.paidDay, fact.failedDay, fact.refundedDay, json(fact.refunds)];
}

/** A fact row as the driver returns it (BIGINT may come back as a string). */
interface FactRow {
  payment_id: string;
  amount_cents: string | number | null;
  items: string | null;
  created_day: string | null;
  paid_day: string | null;
  failed_day: string | null;
  refunded_day: string | null;
  refunds: string | null;
}

function fromRow(row: FactRow): Fact {
  return {
    paymentId: row.payment_id,
    amountCents: row.amount_cents === null ? null : Number(row.amount_cents),
    items: row.items ? (JSON.parse(row.items) as Fact['items']) : null,
    createdDay: row.created_day,
    paidDay: row.paid_day,
    failedDay: row.failed_day,
    refundedDay: row.refunded_day,
    refunds: row.refunds ? (JSON.parse(row.refunds) as Fact['refunds']) : null,
  };
}

function fromEntity(entity: PaymentFact): Fact {
  return {
    ...entity,
    items: entity.items ? (JSON.parse(entity.items) as Fact['items']) : null,
    refunds: entity.refunds ? (JSON.parse(entity.refunds) as Fact['refunds']) : null,
  };
}

/** Loads the facts `events` touch, applies the events in order, and writes facts and aggregate changes. */
export async function ingest(manager: EntityManager, kind: DatabaseKind, events: FactEvent[]): Promise<void> {
  if (events.length === 0) return;
  const ids = [...new Set(events.map((event) => event.paymentId))].sort();
  const facts = new Map<string, Fact>();
  // Batches of other partitions (or other instances) may touch the same payments at the same time:
  // make sure each fact row exists, then lock the rows in key order before reading them, so two
  // batches never both fold an event into the same old fact.
  const insertIgnore = kind === 'mysql' ? 'INSERT IGNORE INTO' : 'INSERT OR IGNORE INTO';
  for (const part of chunks(ids)) {
    await manager.query(`${insertIgnore} analytics_payment_facts (payment_id) VALUES ${part.map(() => '(?)').join(', ')}`, part);
    const rows = await manager.query<FactRow[]>(
      `SELECT ${FACT_COLUMNS.join(', ')} FROM analytics_payment_facts WHERE payment_id IN (${part.map(() => '?').join(', ')})${kind === 'mysql' ? ' FOR UPDATE' : ''}`,
      part,
    );
    for (const row of rows) facts.set(row.payment_id, fromRow(row));
  }

  const deltas = new Deltas();
  const changed = new Set<string>();
  for (const event of events) {
    const before = facts.get(event.paymentId) ?? emptyFact(event.paymentId);
    const after = withEvent(before, event);
    if (after === before) continue;
    contribute(before, -1, deltas);
    contribute(after, 1, deltas);
    facts.set(event.paymentId, after);
    changed.add(event.paymentId);
  }
  if (changed.size === 0) return;

  const factRows = [...changed].sort().map((id) => toRow(facts.get(id) as Fact));
  await upsert(manager, kind, 'analytics_payment_facts', 'payment_id', FACT_COLUMNS, factRows, { replaced: FACT_COLUMNS.slice(1) });

  await writeDeltas(manager, kind, deltas);
}

/** Adds the day and book changes to their aggregate rows. */
async function writeDeltas(manager: EntityManager, kind: DatabaseKind, deltas: Deltas): Promise<void> {
  const dayRows = [...deltas.days.entries()]
    .filter(([, counters]) => DAY_COUNTERS.some((key) => counters[key] !== 0))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([day, counters]) => [day, ...DAY_COUNTERS.map((key) => counters[key])]);
  const dayColumns = DAY_COUNTERS.map((key) => DAY_COLUMNS[key]);
  await upsert(manager, kind, 'analytics_daily', 'day', ['day', ...dayColumns], dayRows, { added: dayColumns });

  const bookRows = [...deltas.books.entries()]
    .filter(([, counters]) => counters.quantitySold !== 0 || counters.revenueCents !== 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([bookId, counters]) => [bookId, counters.bookTitle, counters.quantitySold, counters.revenueCents]);
  await upsert(manager, kind, 'analytics_book_sales', 'book_id', ['book_id', 'book_title', 'quantity_sold', 'revenue_cents'], bookRows, {
    added: ['quantity_sold', 'revenue_cents'],
    replaced: ['book_title'],
  });
}

/** Recomputes every aggregate from the facts (after a formula changes). */
export async function rebuildAggregates(manager: EntityManager, kind: DatabaseKind): Promise<{ facts: number }> {
  await manager.query('DELETE FROM analytics_daily');
  await manager.query('DELETE FROM analytics_book_sales');
  let count = 0;
  let after = '';
  for (;;) {
    const page = await manager.createQueryBuilder(PaymentFact, 'f').where('f.payment_id > :after', { after }).orderBy('f.payment_id', 'ASC').take(CHUNK).getMany();
    if (page.length === 0) break;
    const deltas = new Deltas();
    for (const entity of page) contribute(fromEntity(entity), 1, deltas);
    await writeDeltas(manager, kind, deltas);
    count += page.length;
    after = page[page.length - 1].paymentId;
  }
  return { facts: count };
}
