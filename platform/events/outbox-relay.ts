/**
 * The outbox relay: publishes what services recorded in their outbox (outbox.ts), in order, until
 * the bus acknowledges it, then removes it. It is woken when a transaction that recorded events
 * commits, and polls besides for rows of another process or left by a crash.
 *
 * Several replicas share one outbox on MySQL: a relay claims its batch with `SELECT … FOR UPDATE
 * SKIP LOCKED` in a READ COMMITTED transaction that lasts until the bus acknowledged the batch and
 * its rows are deleted, so two relays never publish the same row. A relay that dies mid-batch
 * loses its connection, the server rolls the claim back, and the rows go to the next relay. To keep
 * the order per key, a relay leaves out any row whose key has an older row claimed by another relay;
 * those wait for that relay's commit. A batch the bus did not acknowledge is not delivered (on Kafka
 * it is an aborted transaction); only a relay dying between the acknowledgement and its commit (one
 * round trip) causes one republication, which consumers skip by eventId. A relay commits one
 * batch's removal while it claims and publishes the next, so the database and the bus work at once.
 */
import type { QueryRunner } from 'typeorm';
import type { Database } from '../database';
import type { Logger } from '../logger';
import { runInContext } from '../request-context';
import { detached, startSends } from '../telemetry/spans';
import type { BusMessage, EventBus, PublishOptions } from './bus';
import { RETRY_BACKOFF_MS, nextBackoff } from './bus';
import { OutboxEvent, wakerOf } from './outbox';

interface ClaimedRow {
  id: string | number;
  event_id: string;
  topic: string;
  message_key: string;
  payload: string;
  headers: string | null;
}

/** A claimed row as the bus takes it: its `eventId` and recorded headers travel as message headers. */
function toMessage(row: ClaimedRow): BusMessage {
  const recorded = row.headers ? (JSON.parse(row.headers) as Record<string, string>) : {};
  return { topic: row.topic, key: row.message_key, value: row.payload, headers: { ...recorded, eventId: row.event_id } };
}

export interface RelayOptions {
  /** The service whose outbox this is: its name on the relay's spans (default the process's). */
  service?: string;
  db: Database;
  bus: EventBus;
  logger: Logger;
  /**
   * Rows per claim and per Kafka transaction (default DEFAULT_RELAY_BATCH): each batch costs a claim,
   * a key-order read, a transaction on the broker (whose coordinator makes the next one wait while
   * it writes the commit markers), a delete and a commit, whatever its size.
   */
  batchSize?: number;
  /** Fallback poll for rows written by another process or left by a crash. */
  pollMs?: number;
}

/** See RelayOptions.batchSize; the producer splits a batch into produce requests the broker takes. */
export const DEFAULT_RELAY_BATCH = 5000;

export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private wakeAgain = false;
  private stopped = true;
  private backoff = RETRY_BACKOFF_MS.initial;
  /** Ids of rows published whose removal is still being committed (MySQL; see settle). */
  private readonly unsettled = new Set<string>();
  /** The removal of the batch published last, committed while the next batch is claimed and published. */
  private settling: Promise<void> = Promise.resolve();
  private settleError: unknown;

  private readonly wakeAfterCommit = () => this.wake();

  constructor(private readonly options: RelayOptions) {}

  start(): void {
    this.stopped = false;
    wakerOf(this.options.db.dataSource).relays.add(this.wakeAfterCommit);
    this.wake();
  }

  /** Asks for a pass now (a transaction that recorded events calls it once it commits). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeAgain = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // The relay works for every request that enqueued, so its lines (and spans) belong to none of
    // them; each event's `send` span belongs to the request that recorded it (see publish).
    this.running = detached(() => runInContext({}, () => this.pass())).finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      if (this.wakeAgain) {
        this.wakeAgain = false;
        this.wake();
      }
    });
  }

  /** Publishes everything pending; resolves once the outbox is empty or the bus refused. */
  private async pass(): Promise<void> {
    try {
      let count: number;
      do count = await this.publishBatch();
      while (count === this.batchSize && !this.stopped);
      await this.settled();
      this.backoff = RETRY_BACKOFF_MS.initial;
      this.schedule(this.options.pollMs ?? 1000);
    } catch (error) {
      await this.settling;
      this.settleError = undefined;
      this.options.logger.warn({ err: error, retryInMs: this.backoff }, 'outbox relay could not publish; retrying');
      this.schedule(this.backoff);
      this.backoff = nextBackoff(this.backoff);
    }
  }

  private get batchSize(): number {
    return this.options.batchSize ?? DEFAULT_RELAY_BATCH;
  }

  /**
   * Publishes the oldest rows and removes them once the bus acknowledged them; resolves with the
   * number of rows it looked at (a full batch means there may be more).
   */
  private async publishBatch(): Promise<number> {
    const { db } = this.options;
    if (db.kind === 'mysql') return this.claimAndPublish();
    const rows = await db.manager.find(OutboxEvent, { order: { id: 'ASC' }, take: this.batchSize });
    if (rows.length === 0) return 0;
    await this.publish(
      rows.map((row) => toMessage({ id: row.id, event_id: row.eventId, topic: row.topic, message_key: row.messageKey, payload: row.payload, headers: row.headers })),
    );
    await db.transaction((manager) =>
      manager.delete(
        OutboxEvent,
        rows.map((row) => row.id),
      ),
    );
    return rows.length;
  }

  /**
   * MySQL: claim, publish, then hand the transaction to settle (delete, commit) and claim the next
   * batch while it commits; at most two batches are in flight (see the module comment).
   */
  private async claimAndPublish(): Promise<number> {
    const { db } = this.options;
    const runner = db.dataSource.createQueryRunner();
    let handedOver = false;
    try {
      await runner.startTransaction('READ COMMITTED');
      const claimed = (await runner.query('SELECT id, event_id, topic, message_key, payload, headers FROM outbox_events ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED', [
        this.batchSize,
      ])) as ClaimedRow[];
      const rows = claimed.length > 0 ? await this.inKeyOrder(runner, claimed) : [];
      if (rows.length === 0) {
        await runner.commitTransaction();
        // Nothing, or rows all held back for other relays: an empty pass, so this one waits rather than spins.
        return 0;
      }
      // On Kafka the rows are deleted between sending and committing the batch, so that only the
      // database's COMMIT is left between the broker's commit and ours.
      let deleted = false;
      const beforeCommit = async () => {
        await this.deleteRows(runner, rows);
        deleted = true;
      };
      await this.publish(rows.map(toMessage), { beforeCommit });
      for (const row of rows) this.unsettled.add(String(row.id));
      const previous = this.settling;
      this.settling = this.settle(runner, rows, deleted);
      handedOver = true;
      await previous;
      this.throwSettleError();
      return claimed.length;
    } catch (error) {
      if (!handedOver && runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      if (!handedOver) await runner.release();
    }
  }

  /**
   * Publishes a batch; with tracing on, each message in a `send` span that is a child of the request
   * that recorded it (the trace context of its outbox row), and carrying that span's context.
   */
  private async publish(messages: BusMessage[], options?: PublishOptions): Promise<void> {
    const { bus, service } = this.options;
    const sends = startSends(service, bus.kind === 'kafka' ? 'kafka' : 'in-process', messages);
    try {
      await bus.publish(sends.messages, options);
      sends.done();
    } catch (error) {
      sends.done(error);
      throw error;
    }
  }

  /**
   * Deletes a published batch and commits its claim; never rejects (a failure is kept for the next
   * claim or the end of the pass to throw). Should it fail, the rows stay and go out again; their
   * first copies are already on the bus ahead of any later row of their keys, so the order per key
   * holds and consumers skip the second copies.
   */
  private async settle(runner: QueryRunner, rows: ClaimedRow[], deleted: boolean): Promise<void> {
    try {
      if (!deleted) await this.deleteRows(runner, rows);
      await runner.commitTransaction();
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      this.settleError ??= error;
    } finally {
      for (const row of rows) this.unsettled.delete(String(row.id));
      await runner.release().catch(() => undefined);
    }
  }

  private async deleteRows(runner: QueryRunner, rows: ClaimedRow[]): Promise<void> {
    // The id list first, then each row by its primary key, forced: on a small table the optimizer
    // would rather scan it (for `id IN (…)` or a plain join), and a scan waits on rows another
    // batch or relay holds, which deadlocks when that one waits on ours.
    await runner.query("DELETE o FROM JSON_TABLE(?, '$[*]' COLUMNS (id BIGINT PATH '$')) AS claimed STRAIGHT_JOIN outbox_events AS o FORCE INDEX (PRIMARY) ON o.id = claimed.id", [
      JSON.stringify(rows.map((row) => Number(row.id))),
    ]);
  }

  private throwSettleError(): void {
    const error = this.settleError;
    this.settleError = undefined;
    if (error !== undefined) throw error as Error;
  }

  /** Waits for the last batch's removal; throws its failure. */
  private async settled(): Promise<void> {
    await this.settling;
    this.throwSettleError();
  }

  /**
   * The claimed rows that may go now: rows older than the newest claimed one but not claimed are
   * held by another relay (SKIP LOCKED passed over them), and a claimed row of the same key after
   * such a row must wait for it.
   */
  private async inKeyOrder(runner: QueryRunner, claimed: ClaimedRow[]): Promise<ClaimedRow[]> {
    const mine = new Set(claimed.map((row) => String(row.id)));
    const newest = claimed[claimed.length - 1].id;
    const older = (await runner.query('SELECT id, message_key FROM outbox_events WHERE id <= ? ORDER BY id', [newest])) as Pick<ClaimedRow, 'id' | 'message_key'>[];
    const heldElsewhere = new Map<string, number>();
    for (const row of older) {
      // Rows of this relay's previous batch are published already, whatever their commit does.
      const id = String(row.id);
      if (!mine.has(id) && !this.unsettled.has(id) && !heldElsewhere.has(row.message_key)) heldElsewhere.set(row.message_key, Number(row.id));
    }
    if (heldElsewhere.size === 0) return claimed;
    return claimed.filter((row) => {
      const blocker = heldElsewhere.get(row.message_key);
      return blocker === undefined || Number(row.id) < blocker;
    });
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, ms);
    this.timer.unref();
  }

  /**
   * Finishes the pass under way (so acknowledged rows are removed), then stops. With `flushMs`
   * (graceful shutdown), it first publishes what is still recorded, e.g. by a request that finished
   * while the server drained, for at most that long; what is left waits for the next start.
   */
  async stop(options: { flushMs?: number } = {}): Promise<void> {
    this.stopped = true;
    wakerOf(this.options.db.dataSource).relays.delete(this.wakeAfterCommit);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    if (options.flushMs) await this.flush(options.flushMs);
  }

  private async flush(ms: number): Promise<void> {
    const { logger } = this.options;
    const deadline = Date.now() + ms;
    let published = 0;
    const work = (async () => {
      for (;;) {
        const count = await this.publishBatch();
        published += count;
        if (count < this.batchSize || Date.now() >= deadline) return this.settled();
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
    try {
      const outcome = await Promise.race([work, timeout]);
      if (outcome === 'timeout') logger.warn({ published, flushMs: ms }, 'outbox not flushed in time; the rest is published at the next start');
      else if (published > 0) logger.info({ published }, 'outbox flushed');
    } catch (error) {
      logger.warn({ err: error, published }, 'outbox could not be flushed; the rest is published at the next start');
    } finally {
      clearTimeout(timer);
      // A publish still under way after the deadline may fail once the database is closed: the rows stay.
      work.catch(() => undefined);
    }
  }

  /** Resolves when nothing is left to publish (used by graceful shutdown and tests). */
  async pending(): Promise<number> {
    return this.options.db.manager.count(OutboxEvent);
  }
}
