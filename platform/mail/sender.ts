/**
 * The sender loop: delivers the mail outbox's due e-mails over SMTP. A row is claimed by a
 * conditional UPDATE on its attempt count, so two replicas never send one row at the same time; a
 * claim lasts `CLAIM_MS`, after which a sender that died mid-send is replaced. Success marks the row
 * SENT with the SMTP message id; a failure waits `retryBaseMs` doubling up to `retryMaxMs` and tries
 * again, for as long as it takes, unless the server refused the e-mail for good (a 5xx answer: FAILED).
 */
import nodemailer, { type Transporter } from 'nodemailer';
import { LessThan, LessThanOrEqual } from 'typeorm';
import type { Database } from '../database';
import type { Logger } from '../logger';
import { OutgoingMail } from './entities';

const CLAIM_MS = 60_000;
const BATCH = 20;

export interface MailSenderOptions {
  db: Database;
  logger: Logger;
  /** Unset: e-mails are recorded and wait until a server is configured. */
  smtpUrl: string | undefined;
  from: string;
  retryBaseMs: number;
  retryMaxMs: number;
}

function smtpTransport(smtpUrl: string): Transporter {
  return nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
}

export class MailSender {
  private readonly transport: Transporter | undefined;
  private readonly pollMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(private readonly options: MailSenderOptions) {
    this.transport = options.smtpUrl ? smtpTransport(options.smtpUrl) : undefined;
    this.pollMs = Math.min(1000, options.retryBaseMs);
  }

  start(): void {
    if (!this.transport) {
      this.options.logger.warn('SMTP_URL is not set: e-mails are recorded in the mail outbox and sent once it is');
      return;
    }
    this.stopped = false;
    this.wake();
  }

  /** Looks for due e-mails now (after a transaction recorded one), rather than at the next poll. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.sendDue()
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'mail outbox not read'))
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.wake();
        } else {
          this.timer = setTimeout(() => this.wake(), this.pollMs);
          this.timer.unref();
        }
      });
  }

  /** Stops after the e-mail in hand; what is left stays PENDING for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    this.transport?.close();
  }

  private async sendDue(): Promise<void> {
    const { db } = this.options;
    for (;;) {
      const now = new Date();
      const due = await db.manager.find(OutgoingMail, {
        where: [
          { status: 'PENDING', nextAttemptAt: LessThanOrEqual(now) },
          { status: 'SENDING', claimedUntil: LessThan(now) },
        ],
        select: { id: true, attempts: true },
        order: { nextAttemptAt: 'ASC' },
        take: BATCH,
      });
      for (const row of due) {
        if (this.stopped) return;
        await this.sendOne(row.id, row.attempts);
      }
      if (due.length < BATCH) return;
    }
  }

  private async sendOne(id: string, attemptsSeen: number): Promise<void> {
    const { db, logger } = this.options;
    const transport = this.transport;
    if (!transport) return;
    const attempt = attemptsSeen + 1;
    const claimed = await db.manager.update(OutgoingMail, { id, attempts: attemptsSeen }, { status: 'SENDING', attempts: attempt, claimedUntil: new Date(Date.now() + CLAIM_MS) });
    if (claimed.affected !== 1) return;
    const mail = await db.manager.findOneByOrFail(OutgoingMail, { id });
    try {
      const info = (await transport.sendMail({
        from: this.options.from,
        to: mail.recipient,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        // The same Message-ID on every attempt: a receiver can tell a repeat after a lost answer.
        messageId: `<${mail.id}@bookstore>`,
      })) as { messageId: string };
      await db.manager.update(
        OutgoingMail,
        { id, attempts: attempt },
        { status: 'SENT', messageId: info.messageId, sentAt: new Date(), claimedUntil: null, text: '', html: '', lastError: null },
      );
      logger.info({ mailId: id, template: mail.template, messageId: info.messageId }, 'e-mail sent');
    } catch (error) {
      const code = (error as { responseCode?: number }).responseCode;
      const refused = typeof code === 'number' && code >= 500;
      const delay = Math.min(this.options.retryBaseMs * 2 ** Math.min(attempt - 1, 20), this.options.retryMaxMs);
      const lastError = (error instanceof Error ? error.message : String(error)).slice(0, 500);
      await db.manager.update(
        OutgoingMail,
        { id, attempts: attempt },
        { status: refused ? 'FAILED' : 'PENDING', nextAttemptAt: new Date(Date.now() + delay), claimedUntil: null, lastError },
      );
      logger.warn(
        { mailId: id, template: mail.template, attempt, retryInMs: refused ? undefined : delay, err: error },
        refused ? 'e-mail refused by the SMTP server' : 'e-mail not sent; will retry',
      );
    }
  }
}
