/**
 * The sender loop: renders and delivers the mail outbox's due e-mails over SMTP. A row is claimed by
 * a conditional UPDATE on its attempt count, so two replicas never send one row at the same time; a
 * claim lasts `CLAIM_MS`, after which a sender that died mid-send is replaced. Each attempt renders
 * the row's template from its data and from what the service's preparer for the template adds then
 * (a token's link, made for this attempt and never stored), or finds it no longer owed (SKIPPED).
 * Success marks the row SENT with the SMTP message id; a failure waits `retryBaseMs` doubling up to
 * `retryMaxMs` and tries again, for as long as it takes, unless the server refused the e-mail for
 * good (a 5xx answer: FAILED) or the row's `expiresAt` passed (EXPIRED). A row's data and body are
 * emptied when it reaches any of these final statuses.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import { LessThan, LessThanOrEqual } from 'typeorm';
import type { Database } from '../database';
import type { Logger } from '../logger';
import { runInContext } from '../request-context';
import { OutgoingMail, type MailStatus } from './entities';
import type { MailTemplates, RenderedMail, TemplateData } from './templates';

const CLAIM_MS = 60_000;
const BATCH = 20;

/** An e-mail about to be sent, as its preparer sees it. */
export interface MailToPrepare {
  id: string;
  recipient: string;
  /** The data recorded with it. */
  data: TemplateData;
  /** When it was recorded: when its cause happened. */
  createdAt: Date;
}

/**
 * What a service adds to the data of one template's e-mail when it is sent, from what is true then;
 * null when the e-mail is no longer owed. Called once per attempt.
 */
export type MailPreparer = (mail: MailToPrepare) => Promise<TemplateData | null>;

/** What a final status leaves of a row: nothing it was sent with. */
const EMPTIED = { data: null, text: '', html: '' };

export interface MailSenderOptions {
  db: Database;
  logger: Logger;
  templates: MailTemplates;
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
  private readonly preparers = new Map<string, MailPreparer>();
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

  /** Has `preparer` add to every e-mail of `template` at send time. */
  prepare(template: string, preparer: MailPreparer): void {
    this.preparers.set(template, preparer);
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
    // Outside the context of the request that woke it: what it sends is not that request's work.
    this.running = runInContext({}, () => this.sendDue())
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
    await db.manager.update(OutgoingMail, { status: 'PENDING', expiresAt: LessThanOrEqual(new Date()) }, { status: 'EXPIRED', ...EMPTIED });
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
    const settle = (status: MailStatus, fields: Partial<OutgoingMail>) => db.manager.update(OutgoingMail, { id, attempts: attempt }, { status, claimedUntil: null, ...fields });
    const about = { mailId: id, template: mail.template };
    if (mail.expiresAt && mail.expiresAt.getTime() <= Date.now()) {
      await settle('EXPIRED', EMPTIED);
      logger.info(about, 'e-mail expired before it could be sent');
      return;
    }
    try {
      const content = await this.render(mail);
      if (!content) {
        await settle('SKIPPED', EMPTIED);
        logger.info(about, 'e-mail no longer owed; not sent');
        return;
      }
      const info = (await transport.sendMail({
        from: this.options.from,
        to: mail.recipient,
        subject: content.subject,
        text: content.text,
        html: content.html,
        // The same Message-ID on every attempt: a receiver can tell a repeat after a lost answer.
        messageId: `<${mail.id}@bookstore>`,
      })) as { messageId: string };
      await settle('SENT', { ...EMPTIED, subject: content.subject.slice(0, 200), messageId: info.messageId, sentAt: new Date(), lastError: null });
      logger.info({ ...about, messageId: info.messageId }, 'e-mail sent');
    } catch (error) {
      const code = (error as { responseCode?: number }).responseCode;
      const refused = typeof code === 'number' && code >= 500;
      const delay = Math.min(this.options.retryBaseMs * 2 ** Math.min(attempt - 1, 20), this.options.retryMaxMs);
      const lastError = (error instanceof Error ? error.message : String(error)).slice(0, 500);
      await settle(refused ? 'FAILED' : 'PENDING', { ...(refused ? EMPTIED : {}), nextAttemptAt: new Date(Date.now() + delay), lastError });
      logger.warn({ ...about, attempt, retryInMs: refused ? undefined : delay, err: error }, refused ? 'e-mail refused by the SMTP server' : 'e-mail not sent; will retry');
    }
  }

  /** The e-mail as it goes out now, or null when it is no longer owed. */
  private async render(mail: OutgoingMail): Promise<RenderedMail | null> {
    // A row recorded before e-mails were rendered at send time carries its body.
    if (mail.data === null) return { subject: mail.subject, text: mail.text, html: mail.html };
    const data = JSON.parse(mail.data) as TemplateData;
    const prepare = this.preparers.get(mail.template);
    const added = prepare ? await prepare({ id: mail.id, recipient: mail.recipient, data, createdAt: mail.createdAt }) : {};
    return added && this.options.templates.render(mail.template, { ...data, ...added });
  }
}
