/**
 * The per-account login throttle (CONTRACT §1.2, §2): a slow-down for one email, from whatever
 * clients, not a lock-out its owner cannot get past. It counts failed logins, not logins.
 *
 * Every login takes a turn in its email's queue (a row of `auth_login_turns`, numbered in the order
 * the turns were taken) and has its password checked only once the email's failures in the current
 * window plus the turns ahead of it are fewer than `maxFailures`; until then it waits for the ones
 * ahead to be judged. A failure is counted before its turn is given up, a success starts the count
 * again. So however many logins are in flight, at most `maxFailures` failures are ever judged in a
 * window, and once they are, the rest answer 429 with Retry-After until the window that began with
 * the first failure ends; a right password is never refused because other logins are in flight, it
 * waits its turn. The failures are the shared rate-limit rows of the auth database
 * (platform/rate-limit-store.ts) and the turns a table of it, so every replica counts and queues
 * against the same budget; a replica wakes its own waiters when a login settles and polls for the
 * others'. Unknown emails are counted too, so the answer tells nobody whether an account exists.
 */
import type { Database } from '../../platform/database';
import { AppError } from '../../platform/errors';
import { DatabaseRateLimitStore, MYSQL_NOW_MS } from '../../platform/rate-limit-store';

export interface LoginThrottleSettings {
  windowMs: number;
  maxFailures: number;
}

export const LOGIN_TURNS_TABLE = 'auth_login_turns';
/**
 * A turn not given up within this long (its replica died mid-login) stops holding the ones behind
 * it; a login waiting for its turn renews its own lease while it waits.
 */
const TURN_LEASE_MS = 30_000;
const RENEW_AFTER_MS = 10_000;
/** How often a waiting login looks again for logins settled by other replicas: from the first to the most. */
const POLL_MS = [10, 200] as const;

/** The 429 of a throttle whose count for the key is used up until `resetTime`, within one window. */
function tooMany(code: string, message: string, windowMs: number, resetTime: Date | undefined): AppError {
  // On MySQL the window is timed by the database's clock: keep the answer within one window.
  const remainingMs = (resetTime?.getTime() ?? Date.now() + windowMs) - Date.now();
  const seconds = Math.min(Math.ceil(windowMs / 1000), Math.max(1, Math.ceil(remainingMs / 1000)));
  return new AppError(code, message, 429, null, { 'Retry-After': String(seconds) });
}

export class LoginThrottle {
  private readonly failures: DatabaseRateLimitStore;
  /** This process's logins waiting for their turn, by email; woken when a login of the email settles here. */
  private readonly waiting = new Map<string, Set<() => void>>();
  private lastSweep = 0;

  constructor(
    private readonly db: Database,
    private readonly settings: LoginThrottleSettings,
  ) {
    // Its own prefix: the per-client route limiters ("login:", ...) share the table.
    this.failures = new DatabaseRateLimitStore(db, 'account-login:');
    this.failures.init({ windowMs: settings.windowMs });
  }

  /**
   * Judges one login for `email` once its turn comes: `check` looks the account up and compares the
   * password, resolving with the account for a login that succeeds and undefined for one that fails.
   * A failure is counted, a success starts the count again; an error in `check` counts as neither.
   */
  async judge<T>(email: string, check: () => Promise<T | undefined>): Promise<T | undefined> {
    const turn = await this.takeTurn(email);
    let outcome: 'failed' | 'succeeded' | undefined;
    try {
      await this.waitForTurn(email, turn);
      const result = await check();
      outcome = result === undefined ? 'failed' : 'succeeded';
      return result;
    } finally {
      await this.settle(email, turn, outcome);
    }
  }

  private now(): { sql: string; params: number[] } {
    return this.db.kind === 'mysql' ? { sql: MYSQL_NOW_MS, params: [] } : { sql: '?', params: [Date.now()] };
  }

  private takeTurn(email: string): Promise<number> {
    this.sweepNowAndThen();
    return this.db.transaction(async (manager) => {
      // The turns of one email are numbered in the order they commit: each transaction first takes
      // the email's counter row, so no turn can appear ahead of one another login already counted.
      await this.failures.hold(manager, email);
      if (this.db.kind === 'mysql') {
        await manager.query(`INSERT INTO ${LOGIN_TURNS_TABLE} (email, lease_until_ms) VALUES (?, ${MYSQL_NOW_MS} + ?)`, [email, TURN_LEASE_MS]);
        const [row] = await manager.query<{ turn: number | string }[]>('SELECT LAST_INSERT_ID() AS turn');
        return Number(row.turn);
      }
      const [row] = await manager.query<{ turn: number }[]>(`INSERT INTO ${LOGIN_TURNS_TABLE} (email, lease_until_ms) VALUES (?, ?) RETURNING turn`, [
        email,
        Date.now() + TURN_LEASE_MS,
      ]);
      return Number(row.turn);
    });
  }

  private async waitForTurn(email: string, turn: number): Promise<void> {
    const { maxFailures, windowMs } = this.settings;
    let pollMs: number = POLL_MS[0];
    let renewedAt = Date.now();
    for (;;) {
      // The turns ahead first, the failures second: a login settles by counting its failure before it
      // gives up its turn, so reads in this order never see less than there is.
      const now = this.now();
      const [row] = await this.db.dataSource.query<{ ahead: number | string }[]>(
        `SELECT COUNT(*) AS ahead FROM ${LOGIN_TURNS_TABLE} WHERE email = ? AND turn < ? AND lease_until_ms > ${now.sql}`,
        [email, turn, ...now.params],
      );
      const counted = await this.failures.get(email);
      const failures = counted?.totalHits ?? 0;
      if (failures >= maxFailures) throw tooMany('TOO_MANY_FAILED_LOGINS', 'Too many failed logins for this account; try again later', windowMs, counted?.resetTime);
      if (failures + Number(row.ahead) < maxFailures) return;
      if (Date.now() - renewedAt >= RENEW_AFTER_MS) {
        renewedAt = Date.now();
        const lease = this.now();
        await this.db.dataSource.query(`UPDATE ${LOGIN_TURNS_TABLE} SET lease_until_ms = ${lease.sql} + ? WHERE turn = ?`, [...lease.params, TURN_LEASE_MS, turn]);
      }
      await this.nextSettled(email, pollMs);
      pollMs = Math.min(pollMs * 2, POLL_MS[1]);
    }
  }

  private async settle(email: string, turn: number, outcome: 'failed' | 'succeeded' | undefined): Promise<void> {
    try {
      if (outcome === 'failed') await this.failures.increment(email);
      if (outcome === 'succeeded') await this.failures.resetKey(email);
      await this.db.dataSource.query(`DELETE FROM ${LOGIN_TURNS_TABLE} WHERE turn = ?`, [turn]);
    } finally {
      for (const wake of [...(this.waiting.get(email) ?? [])]) wake();
    }
  }

  /** Resolves when a login of `email` settles in this process, or after `ms` (another replica's). */
  private nextSettled(email: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.waiting.get(email) ?? new Set<() => void>();
      this.waiting.set(email, waiters);
      const wake = () => {
        clearTimeout(timer);
        waiters.delete(wake);
        if (waiters.size === 0 && this.waiting.get(email) === waiters) this.waiting.delete(email);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      waiters.add(wake);
    });
  }

  /** Removes the turns of logins whose replica died, at most once a lease and never in the caller's way. */
  private sweepNowAndThen(): void {
    if (Date.now() - this.lastSweep < TURN_LEASE_MS) return;
    this.lastSweep = Date.now();
    const now = this.now();
    this.db.dataSource.query(`DELETE FROM ${LOGIN_TURNS_TABLE} WHERE lease_until_ms <= ${now.sql}`, now.params).catch(() => undefined);
  }
}

/**
 * Requests for one address counted like logins, each one before it is served (forgot-password:
 * every request is one more e-mail asked for): 429 with Retry-After once `maxFailures` fall in the window.
 */
export class AddressRequestLimit {
  private readonly requests: DatabaseRateLimitStore;

  constructor(
    db: Database,
    private readonly settings: LoginThrottleSettings,
  ) {
    this.requests = new DatabaseRateLimitStore(db, 'account-forgot:');
    this.requests.init({ windowMs: settings.windowMs });
  }

  async count(address: string): Promise<void> {
    const { totalHits, resetTime } = await this.requests.increment(address);
    if (totalHits <= this.settings.maxFailures) return;
    throw tooMany('TOO_MANY_REQUESTS', 'Too many password reset requests for this address; try again later', this.settings.windowMs, resetTime);
  }
}
