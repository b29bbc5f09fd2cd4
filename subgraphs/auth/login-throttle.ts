/**
 * The per-account login throttle (CONTRACT §1.2, §2): a slow-down for one email, from whatever
 * clients, not a lock-out its owner cannot get past. Every login takes one attempt from the email's
 * budget before its password is checked, in one atomic increment in the database, so parallel
 * guesses cannot all pass a check made before any of them was counted: of any burst, at most
 * `maxFailures` are judged, and the rest answer 429 with Retry-After until the window that began
 * with the first attempt ends. The counters are the shared rate-limit rows of the auth database
 * (platform/rate-limit-store.ts), so every replica counts against the same budget. Unknown emails
 * are counted too, so the answer tells nobody whether an account exists.
 */
import type { Database } from '../../platform/database';
import { AppError } from '../../platform/errors';
import { DatabaseRateLimitStore } from '../../platform/rate-limit-store';

export interface LoginThrottleSettings {
  windowMs: number;
  maxFailures: number;
}

/** What one throttle counts: logins by default; `password-forgot` counts reset e-mails asked for an address. */
const THROTTLED = {
  login: { prefix: 'account-login:', code: 'TOO_MANY_FAILED_LOGINS', message: 'Too many failed logins for this account; try again later' },
  'password-forgot': { prefix: 'account-forgot:', code: 'TOO_MANY_REQUESTS', message: 'Too many password reset requests for this address; try again later' },
} as const;

export class LoginThrottle {
  private readonly attempts: DatabaseRateLimitStore;
  private readonly counted: (typeof THROTTLED)[keyof typeof THROTTLED];

  constructor(
    db: Database,
    private readonly settings: LoginThrottleSettings,
    what: keyof typeof THROTTLED = 'login',
  ) {
    this.counted = THROTTLED[what];
    // Its own prefix: the per-client route limiters ("login:", ...) share the table.
    this.attempts = new DatabaseRateLimitStore(db, this.counted.prefix);
    this.attempts.init({ windowMs: settings.windowMs });
  }

  /** Counts a login for the email before its password is checked; 429 once the budget is used up. */
  async attempt(email: string): Promise<void> {
    const { totalHits, resetTime } = await this.attempts.increment(email);
    if (totalHits <= this.settings.maxFailures) return;
    // On MySQL the window is timed by the database's clock: keep the answer within one window.
    const remainingMs = (resetTime?.getTime() ?? Date.now() + this.settings.windowMs) - Date.now();
    const seconds = Math.min(Math.ceil(this.settings.windowMs / 1000), Math.max(1, Math.ceil(remainingMs / 1000)));
    throw new AppError(this.counted.code, this.counted.message, 429, null, { 'Retry-After': String(seconds) });
  }

  /**
   * The password was right: the count starts again, rather than only this attempt being released.
   * The owner's earlier typos then no longer bring the next one closer to a 429, as before this
   * change. The attempts of other logins in flight are forgotten with it; an attacker cannot make the
   * owner log in, and owners logging in at once each took an attempt that this frees for the others.
   */
  async succeeded(email: string): Promise<void> {
    await this.attempts.resetKey(email);
  }
}
