/**
 * A store for express-rate-limit that keeps its counters in the service's own database, so every
 * replica behind the load balancer counts against the same limit. One row per limiter prefix and
 * client key holds the hits of the current window and when it ends; an increment is one atomic
 * upsert that starts a new window once the old one has ended. On MySQL the window is timed by the
 * database's clock (replicas' clocks may differ); SQLite belongs to one process, which times it.
 * Rows of ended windows are swept now and then; a missing row simply means a fresh window. The
 * table (`rate_limit_counters`) is created by a migration of the service whose limiter uses it.
 */
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type { EntityManager } from 'typeorm';
import type { Database } from './database';

export const RATE_LIMIT_TABLE = 'rate_limit_counters';

// Milliseconds since the epoch by the server's clock (UNIX_TIMESTAMP does not depend on the session time zone).
export const MYSQL_NOW_MS = 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)';

export class DatabaseRateLimitStore implements Store {
  readonly localKeys = false;
  private windowMs = 60_000;
  private lastSweep = 0;

  /** `prefix` tells apart the limiters sharing the table (e.g. one per route). */
  constructor(
    private readonly db: Database,
    readonly prefix: string,
  ) {}

  /** express-rate-limit passes its options; other users of the store give the window alone. */
  init(options: Pick<Options, 'windowMs'>): void {
    this.windowMs = options.windowMs;
  }

  private key(key: string): string {
    // Longer keys (an IPv6 address with a long prefix) are cut; the column holds 191 characters.
    return `${this.prefix}${key}`.slice(0, 191);
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const now = this.db.kind === 'mysql' ? MYSQL_NOW_MS : '?';
    const rows = await this.db.dataSource.query<{ hits: number | string; reset_at_ms: number | string }[]>(
      `SELECT hits, reset_at_ms FROM ${RATE_LIMIT_TABLE} WHERE counter_key = ? AND reset_at_ms > ${now}`,
      this.db.kind === 'mysql' ? [this.key(key)] : [this.key(key), Date.now()],
    );
    return rows[0] ? toInfo(rows[0]) : undefined;
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    this.sweepNowAndThen();
    const counterKey = this.key(key);
    if (this.db.kind === 'mysql') {
      return this.db.transaction(async (manager) => {
        // Assignments apply left to right; `reset_at_ms` is still the old one in both conditions.
        await manager.query(
          `INSERT INTO ${RATE_LIMIT_TABLE} (counter_key, hits, reset_at_ms) VALUES (?, 1, ${MYSQL_NOW_MS} + ?)
           ON DUPLICATE KEY UPDATE
             hits = IF(reset_at_ms <= ${MYSQL_NOW_MS}, 1, hits + 1),
             reset_at_ms = IF(reset_at_ms <= ${MYSQL_NOW_MS}, ${MYSQL_NOW_MS} + ?, reset_at_ms)`,
          [counterKey, this.windowMs, this.windowMs],
        );
        const [row] = await manager.query<{ hits: number | string; reset_at_ms: number | string }[]>(`SELECT hits, reset_at_ms FROM ${RATE_LIMIT_TABLE} WHERE counter_key = ?`, [
          counterKey,
        ]);
        return toInfo(row);
      });
    }
    const now = Date.now();
    const [row] = await this.db.dataSource.query<{ hits: number | string; reset_at_ms: number | string }[]>(
      `INSERT INTO ${RATE_LIMIT_TABLE} (counter_key, hits, reset_at_ms) VALUES (?, 1, ?)
       ON CONFLICT (counter_key) DO UPDATE SET
         hits = CASE WHEN reset_at_ms <= ? THEN 1 ELSE hits + 1 END,
         reset_at_ms = CASE WHEN reset_at_ms <= ? THEN excluded.reset_at_ms ELSE reset_at_ms END
       RETURNING hits, reset_at_ms`,
      [counterKey, now + this.windowMs, now, now],
    );
    return toInfo(row);
  }

  async decrement(key: string): Promise<void> {
    await this.db.dataSource.query(`UPDATE ${RATE_LIMIT_TABLE} SET hits = hits - 1 WHERE counter_key = ? AND hits > 0`, [this.key(key)]);
  }

  /**
   * Takes the key's row until the caller's transaction ends, creating it as an ended window, so that
   * transactions about one key take turns (MySQL; SQLite's transactions already run one at a time).
   */
  async hold(manager: EntityManager, key: string): Promise<void> {
    if (this.db.kind !== 'mysql') return;
    await manager.query(`INSERT INTO ${RATE_LIMIT_TABLE} (counter_key, hits, reset_at_ms) VALUES (?, 0, ${MYSQL_NOW_MS}) ON DUPLICATE KEY UPDATE hits = hits`, [this.key(key)]);
  }

  async resetKey(key: string): Promise<void> {
    await this.db.dataSource.query(`DELETE FROM ${RATE_LIMIT_TABLE} WHERE counter_key = ?`, [this.key(key)]);
  }

  /** Removes the rows of windows that ended, at most once a window and never in the caller's way. */
  private sweepNowAndThen(): void {
    if (Date.now() - this.lastSweep < this.windowMs) return;
    this.lastSweep = Date.now();
    const ended = this.db.kind === 'mysql' ? [`reset_at_ms <= ${MYSQL_NOW_MS}`, []] : ['reset_at_ms <= ?', [Date.now()]];
    this.db.dataSource
      .query(`DELETE FROM ${RATE_LIMIT_TABLE} WHERE counter_key LIKE ? AND ${ended[0] as string}`, [`${this.prefix}%`, ...(ended[1] as number[])])
      .catch(() => undefined);
  }
}

function toInfo(row: { hits: number | string; reset_at_ms: number | string }): ClientRateLimitInfo {
  return { totalHits: Number(row.hits), resetTime: new Date(Number(row.reset_at_ms)) };
}
