/**
 * The account e-mail flows (CONTRACT §11): a password reset and an address verification, each by a
 * single-use token sent by e-mail and stored only as its SHA-256 hash. A reset token lasts 30
 * minutes, a verification token 48 hours; a newer request of the same purpose replaces the older.
 *
 * A request records its e-mail and nothing else: the token is made by the mail sender when it sends
 * the e-mail (the preparers below), so no link waits anywhere, and forgot-password does the same work
 * whether an account has the address or not; the sender finds out, off the request path.
 */
import { randomUUID } from 'node:crypto';
import bcrypt from 'bcrypt';
import { IsNull, LessThan, MoreThan, type EntityManager, type FindOptionsWhere } from 'typeorm';
import type { Database } from '../../platform/database';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import { enqueueMail } from '../../platform/mail/outbox';
import type { MailPreparer, MailToPrepare } from '../../platform/mail/sender';
import type { MailTemplates, TemplateData } from '../../platform/mail/templates';
import { storedKey } from '../../platform/validation';
import { Account, AccountToken, type AccountTokenPurpose } from './entities';
import { publishEmailVerified } from './events';
import type { AddressRequestLimit } from './login-throttle';
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
  requests: AddressRequestLimit;
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
  async recordVerification(manager: EntityManager, account: Pick<Account, 'id' | 'email'>): Promise<void> {
    await this.record(manager, 'EMAIL_VERIFICATION', account.id, account.email, { userId: account.id });
  }

  /**
   * Records a reset e-mail to the address, whoever has it; says nothing either way. Only when it is
   * sent is the account looked up, and the e-mail sent if one has the address.
   */
  async forgotPassword(email: string): Promise<void> {
    const address = storedKey(email);
    await this.deps.requests.count(address);
    await this.deps.db.transaction((manager) => this.record(manager, 'PASSWORD_RESET', randomUUID(), address, {}));
    this.wake();
  }

  /** What the mail sender adds to each e-mail when it sends it: the link with a token made then. */
  preparers(): Record<string, MailPreparer> {
    return {
      [FLOWS.PASSWORD_RESET.template]: (mail) => this.prepare(mail, 'PASSWORD_RESET', { email: mail.recipient }),
      [FLOWS.EMAIL_VERIFICATION.template]: (mail) => this.prepare(mail, 'EMAIL_VERIFICATION', { id: String(mail.data.userId) }),
    };
  }

  private async record(manager: EntityManager, purpose: AccountTokenPurpose, cause: string, to: string, data: TemplateData): Promise<void> {
    const flow = FLOWS[purpose];
    // Not sent once the token it would carry would have expired: the owner has asked again, or will.
    await enqueueMail(manager, this.deps.templates, { cause, template: flow.template, to, data, expiresAt: new Date(Date.now() + flow.ttlMs) });
  }

  /** The link of an e-mail about to be sent, or null when no active account is owed it. */
  private prepare(mail: MailToPrepare, purpose: AccountTokenPurpose, owner: FindOptionsWhere<Account>): Promise<TemplateData | null> {
    const flow = FLOWS[purpose];
    return this.deps.db.transaction(async (manager) => {
      const account = await manager.findOne(Account, { where: owner, select: { id: true, status: true, emailVerifiedAt: true } });
      if (!account || account.status !== 'ACTIVE') return null;
      if (purpose === 'EMAIL_VERIFICATION' && account.emailVerifiedAt) return null;
      const secret = await this.issue(manager, account.id, purpose, mail.createdAt);
      if (secret === undefined) return null;
      this.deps.logger.info({ userId: account.id, purpose }, 'account e-mail token made for sending');
      return { link: `${this.deps.shopUrl}/${flow.page}?token=${secret}`, ...flow.data };
    });
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

  /**
   * Makes a token of `purpose` for the request made at `requestedAt`, and resolves with its secret;
   * undefined when a newer request of the same purpose has one (its e-mail carries the link that works).
   */
  private async issue(manager: EntityManager, userId: string, purpose: AccountTokenPurpose, requestedAt: Date): Promise<string | undefined> {
    if (await manager.exists(AccountToken, { where: { userId, purpose, requestedAt: MoreThan(requestedAt) } })) return undefined;
    const now = new Date();
    // The tokens of earlier requests stop working. Those of earlier attempts at this request do not:
    // an attempt whose answer the SMTP server lost may have reached the mailbox.
    await manager.update(AccountToken, { userId, purpose, usedAt: IsNull(), requestedAt: LessThan(requestedAt) }, { usedAt: now });
    const secret = newSecretToken();
    await manager.insert(AccountToken, {
      id: randomUUID(),
      tokenHash: hashSecretToken(secret),
      userId,
      purpose,
      requestedAt,
      expiresAt: new Date(now.getTime() + FLOWS[purpose].ttlMs),
      usedAt: null,
      createdAt: now,
    });
    return secret;
  }

  /** Spends the token (one conditional update, so two uses at once cannot both pass); resolves with its user. */
  private async use(manager: EntityManager, presented: string, purpose: AccountTokenPurpose): Promise<string> {
    const token = await manager.findOne(AccountToken, { where: { tokenHash: hashSecretToken(presented), purpose } });
    if (!token) throw invalidToken();
    const now = new Date();
    const spent = await manager.update(AccountToken, { id: token.id, usedAt: IsNull(), expiresAt: MoreThan(now) }, { usedAt: now });
    if (spent.affected !== 1) throw invalidToken();
    // The other links of the purpose (made by other attempts at sending the e-mail) go with it.
    await manager.update(AccountToken, { userId: token.userId, purpose, usedAt: IsNull() }, { usedAt: now });
    return token.userId;
  }
}
