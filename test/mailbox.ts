/** A real SMTP server in the test process (the local mailbox), and reading what reached it. */
import { LocalMailbox, type ReceivedMail } from '../platform/mail/local-mailbox';
import { waitFor } from './wait';

/** Starts a mailbox on a free port; `env` points a stack's services at it, retrying quickly. */
export async function startMailbox(): Promise<{ mailbox: LocalMailbox; env: Record<string, string> }> {
  const mailbox = new LocalMailbox();
  await mailbox.start(0);
  return { mailbox, env: { SMTP_URL: mailbox.url, MAIL_RETRY_BASE_MS: '50', MAIL_RETRY_MAX_MS: '200' } };
}

export function mailsTo(mailbox: LocalMailbox, address: string, subject?: RegExp): ReceivedMail[] {
  return mailbox.received.filter((mail) => mail.to.includes(address) && (!subject || subject.test(mail.subject)));
}

/** The first e-mail to `address` whose subject matches, once it has arrived. */
export function mailTo(mailbox: LocalMailbox, address: string, subject: RegExp): Promise<ReceivedMail> {
  return waitFor(() => mailsTo(mailbox, address, subject)[0], { what: `an e-mail to ${address} matching ${String(subject)}` });
}

/** The token of the e-mail's link (`...?token=<token>`), the same in its text and HTML parts. */
export function tokenOf(mail: ReceivedMail): string {
  const inText = /\?token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
  const inHtml = /\?token=([A-Za-z0-9_-]+)/.exec(mail.html)?.[1];
  if (!inText || inText !== inHtml) throw new Error(`no single token in the e-mail: ${mail.text}`);
  return inText;
}
