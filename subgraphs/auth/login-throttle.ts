/**
 * The per-account failed-login throttle (CONTRACT §1.2): after `maxFailures` failed logins for one
 * email within a window, from whatever clients, every login for it answers 429 with Retry-After
 * until the window that began with the first failure ends. A slow-down, not a lock-out: the owner
 * gets in once the window has passed, and a successful login clears the count. The counters live in
 * the auth database, so every replica of the service sees the same ones. Unknown emails are counted
 * too, so the answer tells nobody whether an account exists.
 */
import type { Database } from '../../platform/database';
import { isUniqueViolation } from '../../platform/database';
import { AppError } from '../../platform/errors';
import { LoginFailure } from './entities';

export interface LoginThrottleSettings {
  windowMs: number;
  maxFailures: number;
}

export class LoginThrottle {
  constructor(
    private readonly db: Database,
    private readonly settings: LoginThrottleSettings,
  ) {}

  /** Rejects with 429 while the email has used up its failures in the current window. */
  async check(email: string): Promise<void> {
    const row = await this.db.manager.findOne(LoginFailure, { where: { email } });
    if (!row || row.failures < this.settings.maxFailures) return;
    const remainingMs = row.windowStartedAt.getTime() + this.settings.windowMs - Date.now();
    if (remainingMs <= 0) return;
    const seconds = String(Math.max(1, Math.ceil(remainingMs / 1000)));
    throw new AppError('TOO_MANY_FAILED_LOGINS', 'Too many failed logins for this account; try again later', 429, null, { 'Retry-After': seconds });
  }

  /** Counts a failed login: a new window begins when the last one has passed. */
  async failed(email: string): Promise<void> {
    const now = new Date();
    const windowOpenSince = new Date(now.getTime() - this.settings.windowMs);
    await this.db.transaction(async (manager) => {
      const row = await manager.findOne(LoginFailure, { where: { email } });
      if (!row) {
        try {
          await manager.insert(LoginFailure, { email, failures: 1, windowStartedAt: now });
          return;
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
        }
      } else if (row.windowStartedAt <= windowOpenSince) {
        await manager.update(LoginFailure, { email }, { failures: 1, windowStartedAt: now });
        return;
      }
      await manager.increment(LoginFailure, { email }, 'failures', 1);
    });
  }

  async succeeded(email: string): Promise<void> {
    await this.db.manager.delete(LoginFailure, { email });
  }
}
