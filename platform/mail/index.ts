/**
 * E-mail for a service that sends it (auth, order): its templates, the mail outbox table the service
 * adds to its own (`MAIL_ENTITIES`, `MAIL_MIGRATIONS`), and the sender loop that delivers from it.
 */
import type { Config } from '../config';
import type { Database } from '../database';
import type { Logger } from '../logger';
import { MailOutbox1732000002000 } from '../migrations/1732000002000-MailOutbox';
import { MailRenderedAtSendTime1732000002100 } from '../migrations/1732000002100-MailRenderedAtSendTime';
import { OutgoingMail } from './entities';
import { MailSender } from './sender';
import { MailTemplates } from './templates';

export const MAIL_ENTITIES = [OutgoingMail];
export const MAIL_MIGRATIONS = [MailOutbox1732000002000, MailRenderedAtSendTime1732000002100];

export interface Mailer {
  templates: MailTemplates;
  sender: MailSender;
}

/** `templatesDir`: the service's `mail/` folder. */
export function createMailer(shell: { config: Config; db: Database; logger: Logger }, templatesDir: string): Mailer {
  const { mail } = shell.config;
  const templates = new MailTemplates(templatesDir);
  return {
    templates,
    sender: new MailSender({ db: shell.db, logger: shell.logger, templates, smtpUrl: mail.smtpUrl, from: mail.from, retryBaseMs: mail.retryBaseMs, retryMaxMs: mail.retryMaxMs }),
  };
}
