/**
 * The account e-mail flows (CONTRACT §11): a password reset and an address verification, each by a
 * single-use token sent by e-mail and stored only as its SHA-256 hash. A reset token lasts 30
 * minutes, a verification token 48 hours; a newer token of the same purpose replaces the older.
 */
import { randomUUID } from 'node:crypto';
import bcrypt from 'bcrypt';
import { IsNull, MoreThan, type EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import { enqueueMail } from '../../platform/mail/outbox';
import type { MailTemplates } from '../../platform/mail/templates';
import { storedKey } from '../../platform/validation';
import { Account, AccountToken, type AccountTokenPurpose } from './entities';
import { publishEmailVerified } from './events';
import type { LoginThrottle } from './login-throttle';
import { revokeSessions } from './sessions';
import { hashSecretToken, newSecretToken } from './tokens';

export const PASSWORD_RESET_TTL_MS = 30 * 60 * 1000;
export const EMAIL_VERIFICATION_TTL_MS = 48 * 60 * 60 * 1000;

/** Each token's e-mail: its template, the shop page its link opens, and what the text says of its validity. */
const FLOWS: Record<AccountTokenPurpose, { template: string; page: string; ttlMs: number; data: Record<string, number> }> = {
  PASSWORD_RESET: { template: 'password-reset', page: 'reset-password', ttlMs: PASSWORD_RESET_TTL_MS, data: { validMinutes: PASSWORD_RESET_TTL_MS / 60_000 } },
  EMAIL_VERIFICATION: { template: 'verify-email', page: 'verify-email', ttlMs: EMAIL_VERIFICATION_TTL_MS, data: { validHours: EMAIL_VERIFICATION_TTL_MS / 3_600_000 } },
};

const invalidToken = () => new AppError('INVALID_TOKEN', 'Invalid or expired token', 400);

export interface AccountEmailDeps {
  db: Database;
  templates: MailTemplates;
  /** The shop front the links point to. */
  shopUrl: string;
  /** Reset e-mails asked for one address, counted like logins. */
  throttle: LoginThrottle;
  /** Sends what a transaction recorded without waiting for the next poll. */
  wake: () => void;
  bcryptCost: number;
  logger: Logger;
}

export class AccountEmails {
  constructor(private readonly deps: AccountEmailDeps) {}

  wake(): void {
    this.deps.wake();
  }

  /** Records a new account's verification e-mail, in the transaction that activates the account. */
  recordVerification(manager: EntityManager, account: Pick<Account, 'id' | 'email'>): Promise<void> {
    return this.mailToken(manager, account, 'EMAIL_VERIFICATION');
  }

  /** Sends a reset link to the address if an account has it; says nothing either way. */
  async forgotPassword(email: string): Promise<void> {
    const address = storedKey(email);
    await this.deps.throttle.attempt(address);
    const account = await this.deps.db.manager.findOne(Account, { where: { email: address }, select: { id: true, email: true, status: true } });
    if (!account || account.status !== 'ACTIVE') return;
    await this.deps.db.transaction((manager) => this.mailToken(manager, account, 'PASSWORD_RESET'));
    this.wake();
    this.deps.logger.info({ userId: account.id }, 'password reset e-mail recorded');
  }

  /**
   * Sets the password and ends every session of the user. The link reached the owner's mailbox, so
   * the address counts as verified from then on.
   */
  async resetPassword(presented: string, password: string): Promise<void> {
    const passwordHash = await bcrypt.hash(password, this.deps.bcryptCost);
    const userId = await this.deps.db.transaction(async (manager) => {
      const owner = await this.use(manager, presented, 'PASSWORD_RESET');
      const now = new Date();
      await manager.update(Account, { id: owner }, { passwordHash, updatedAt: now });
      await this.markVerified(manager, owner, now);
      await revokeSessions(manager, { userId: owner }, 'PASSWORD_RESET', { everySession: true });
      return owner;
    });
    this.deps.logger.info({ userId }, 'password reset; every session ended');
  }

  async verifyEmail(presented: string): Promise<void> {
    await this.deps.db.transaction(async (manager) => {
      const owner = await this.use(manager, presented, 'EMAIL_VERIFICATION');
      await this.markVerified(manager, owner, new Date());
    });
  }

  private async markVerified(manager: EntityManager, userId: string, at: Date): Promise<void> {
    const marked = await manager.update(Account, { id: userId, emailVerifiedAt: IsNull() }, { emailVerifiedAt: at, updatedAt: at });
    if (marked.affected === 1) await publishEmailVerified(manager, userId, at);
  }

  /** Issues a token of `purpose` and records the e-mail that carries its link. */
  private async mailToken(manager: EntityManager, account: Pick<Account, 'id' | 'email'>, purpose: AccountTokenPurpose): Promise<void> {
    const flow = FLOWS[purpose];
    const token = await this.issue(manager, account.id, purpose, flow.ttlMs);
    await enqueueMail(manager, this.deps.templates, {
      cause: token.id,
      template: flow.template,
      to: account.email,
      data: { link: `${this.deps.shopUrl}/${flow.page}?token=${token.secret}`, ...flow.data },
    });
  }

  private async issue(manager: EntityManager, userId: string, purpose: AccountTokenPurpose, ttlMs: number): Promise<{ id: string; secret: string }> {
    const now = new Date();
    await manager.update(AccountToken, { userId, purpose, usedAt: IsNull() }, { usedAt: now });
    const token = { id: randomUUID(), secret: newSecretToken() };
    await manager.insert(AccountToken, {
      id: token.id,
      tokenHash: hashSecretToken(token.secret),
      userId,
      purpose,
      expiresAt: new Date(now.getTime() + ttlMs),
      usedAt: null,
      createdAt: now,
    });
    return token;
  }

  /** Spends the token (one conditional update, so two uses at once cannot both pass); resolves with its user. */
  private async use(manager: EntityManager, presented: string, purpose: AccountTokenPurpose): Promise<string> {
    const token = await manager.findOne(AccountToken, { where: { tokenHash: hashSecretToken(presented), purpose } });
    if (!token) throw invalidToken();
    const now = new Date();
    const spent = await manager.update(AccountToken, { id: token.id, usedAt: IsNull(), expiresAt: MoreThan(now) }, { usedAt: now });
    if (spent.affected !== 1) throw invalidToken();
    return token.userId;
  }
}
