/**
 * A local mailbox: an SMTP server (smtp-server) that accepts every e-mail and keeps it, parsed, in
 * memory and, given a folder, as one JSON file per e-mail. The embedded default runs one when no
 * SMTP_URL is given, so its e-mails still travel over SMTP; the tests run one to read what arrives.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { simpleParser, type AddressObject } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  id: string;
  /** ISO-8601 UTC. */
  receivedAt: string;
  messageId: string | null;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
}

const addresses = (value: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(value) ? value : value ? [value] : []).flatMap((entry) => entry.value.map((address) => address.address ?? '')).filter(Boolean);

/** The e-mails kept in `dir`, newest first. */
export function readMailbox(dir: string): ReceivedMail[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .reverse()
    .map((file) => JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as ReceivedMail);
}

/** What an admin reads of the e-mail sent (the auth subgraph's `localMailbox`): the local mailbox's e-mails, or where e-mail goes instead. */
export interface MailboxView {
  enabled: boolean;
  /** The local mailbox's folder, or the SMTP server's URL without credentials; null when there is neither. */
  location: string | null;
  messages: ReceivedMail[];
}

export function mailboxView(mail: { smtpUrl?: string; localMailbox?: { dir: string } }, limit: number): MailboxView {
  if (!mail.localMailbox) return { enabled: false, location: mail.smtpUrl?.replace(/\/\/[^@/]*@/, '//') ?? null, messages: [] };
  return { enabled: true, location: mail.localMailbox.dir, messages: readMailbox(mail.localMailbox.dir).slice(0, limit) };
}

export class LocalMailbox {
  readonly received: ReceivedMail[] = [];
  private server: SMTPServer | undefined;
  private port = 0;

  constructor(private readonly dir?: string) {
    if (dir) fs.mkdirSync(dir, { recursive: true });
  }

  /** Listens on `port` (0: a free one, kept for the next start); resolves with the port. */
  async start(port = this.port, host = '127.0.0.1'): Promise<number> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        simpleParser(stream)
          .then((parsed) => {
            this.keep({
              id: randomUUID(),
              receivedAt: new Date().toISOString(),
              messageId: parsed.messageId ?? null,
              from: addresses(parsed.from)[0] ?? (session.envelope.mailFrom ? session.envelope.mailFrom.address : ''),
              to: session.envelope.rcptTo.map((recipient) => recipient.address),
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
            });
            callback();
          })
          .catch((error: unknown) => callback(error instanceof Error ? error : new Error(String(error))));
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.port = (server.server.address() as AddressInfo).port;
    return this.port;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private keep(mail: ReceivedMail): void {
    this.received.push(mail);
    if (this.dir) fs.writeFileSync(path.join(this.dir, `${mail.receivedAt.replace(/[:.]/g, '-')}-${mail.id}.json`), JSON.stringify(mail, null, 2));
  }
}
