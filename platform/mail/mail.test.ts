/**
 * The mail outbox and its sender against a real SMTP server in the test process, on the run's
 * database: an e-mail is recorded once per cause with its template's data, rendered when it is sent
 * (with what the service's preparer adds then), survives the SMTP server being down, and reaches it
 * exactly once, however many senders share the outbox; once sent, refused, expired or no longer
 * owed, its row keeps nothing of it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { createLogger } from '../logger';
import type { Database } from '../database';
import { openServiceDatabase } from '../../rest-compat/service';
import { dropDatabases, testConfig } from '../../test/stack';
import { startMailbox } from '../../test/mailbox';
import { waitFor } from '../../test/wait';
import { OutgoingMail } from './entities';
import { MAIL_ENTITIES, MAIL_MIGRATIONS } from './index';
import type { LocalMailbox } from './local-mailbox';
import { enqueueMail } from './outbox';
import { MailSender, type MailPreparer } from './sender';
import { MailTemplates } from './templates';

const config = testConfig();
const logger = createLogger('silent');
let db: Database;
let mailbox: LocalMailbox;
let smtpUrl: string;
let templates: MailTemplates;
const senders: MailSender[] = [];

beforeAll(async () => {
  db = await openServiceDatabase({ name: 'order', entities: MAIL_ENTITIES, migrations: MAIL_MIGRATIONS }, config);
  ({ mailbox } = await startMailbox());
  smtpUrl = mailbox.url;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mail-templates-'));
  fs.writeFileSync(path.join(dir, 'note.txt'), 'Subject: A note for {{name}}\nDear {{name}},\n{{#lines}}- {{title}} x{{quantity}}\n{{/lines}}');
  fs.writeFileSync(path.join(dir, 'note.html'), '<p>Dear {{name}},</p><ul>{{#lines}}<li>{{title}} x{{quantity}}</li>{{/lines}}</ul>');
  templates = new MailTemplates(dir);
});
afterAll(async () => {
  await Promise.all(senders.map((sender) => sender.stop()));
  await mailbox?.stop();
  await db?.close();
  await dropDatabases(config, ['order']);
});

function startSender(options: { url?: string; preparer?: MailPreparer } = {}): MailSender {
  const sender = new MailSender({ db, logger, templates, smtpUrl: options.url ?? smtpUrl, from: 'Shop <shop@example.com>', retryBaseMs: 20, retryMaxMs: 100 });
  if (options.preparer) sender.prepare('note', options.preparer);
  senders.push(sender);
  sender.start();
  return sender;
}

function record(cause: string, to: string, name = 'Ada', expiresAt?: Date): Promise<boolean> {
  return db.transaction((manager) => enqueueMail(manager, templates, { cause, template: 'note', to, data: { name, lines: [{ title: 'Dracula', quantity: 2 }] }, expiresAt }));
}

const EMPTIED = { data: null, text: '', html: '' };

const received = (to: string) => mailbox.received.filter((mail) => mail.to.includes(to));
const rowsTo = (to: string) => db.manager.find(OutgoingMail, { where: { recipient: to } });

describe('the mail outbox', () => {
  it('keeps what the template is filled with until the e-mail is sent, not a rendering of it', async () => {
    const to = `${randomUUID()}@example.com`;
    await record(randomUUID(), to, 'Tom & <Jerry>');
    const [row] = await rowsTo(to);
    expect(row).toMatchObject({ status: 'PENDING', subject: '', text: '', html: '' });
    expect(JSON.parse(row.data ?? 'null')).toEqual({ name: 'Tom & <Jerry>', lines: [{ title: 'Dracula', quantity: 2 }] });
  });

  it('refuses to record an e-mail whose template does not exist, in the transaction of its cause', async () => {
    await expect(db.transaction((manager) => enqueueMail(manager, templates, { cause: randomUUID(), template: 'missing', to: 'x@example.com', data: {} }))).rejects.toThrow(
      /missing\.txt/,
    );
  });

  it('records one e-mail per cause and template, however often the cause is handled', async () => {
    const to = `${randomUUID()}@example.com`;
    const cause = randomUUID();
    expect(await record(cause, to)).toBe(true);
    expect(await record(cause, to)).toBe(false);
    expect(await rowsTo(to)).toHaveLength(1);
  });

  it('refuses to record an e-mail outside a transaction', async () => {
    await expect(enqueueMail(db.manager, templates, { cause: randomUUID(), template: 'note', to: 'x@example.com', data: {} })).rejects.toThrow(/inside the transaction/);
  });
});

describe('the sender', () => {
  it('keeps retrying while the SMTP server is down, then delivers each e-mail exactly once', async () => {
    await mailbox.stop();
    const sender = startSender();
    const to = `${randomUUID()}@example.com`;
    for (let i = 0; i < 3; i += 1) await record(randomUUID(), to);
    sender.wake();
    await waitFor(async () => (await rowsTo(to)).every((row) => row.attempts >= 2 && row.status === 'PENDING' && row.lastError !== null), {
      what: 'every e-mail tried twice and still pending',
    });

    await mailbox.start();
    await waitFor(async () => (await rowsTo(to)).every((row) => row.status === 'SENT'), { what: 'every e-mail sent' });
    const rows = await rowsTo(to);
    expect(received(to)).toHaveLength(3);
    expect(new Set(received(to).map((mail) => mail.messageId))).toEqual(new Set(rows.map((row) => row.messageId)));
    rows.forEach((row) => expect(row).toMatchObject({ status: 'SENT', ...EMPTIED }));
    await sender.stop();
  });

  it('sends each e-mail once when two senders share the outbox', async () => {
    const to = `${randomUUID()}@example.com`;
    for (let i = 0; i < 20; i += 1) await record(randomUUID(), to, `Reader ${i}`);
    const [first, second] = [startSender(), startSender()];
    await waitFor(async () => (await rowsTo(to)).every((row) => row.status === 'SENT'), { what: 'every e-mail sent' });
    await Promise.all([first.stop(), second.stop()]);
    expect(received(to)).toHaveLength(20);
    expect(new Set(received(to).map((mail) => mail.subject)).size).toBe(20);
  });

  it('renders both parts when it sends, escaping values in the HTML only, and keeps only the subject', async () => {
    const to = `${randomUUID()}@example.com`;
    await record(randomUUID(), to, 'Tom & <Jerry>');
    const sender = startSender();
    const [mail] = await waitFor(() => received(to), { what: 'the e-mail received', accept: (mails) => mails.length === 1 });
    expect(mail).toMatchObject({ subject: 'A note for Tom & <Jerry>', text: 'Dear Tom & <Jerry>,\n- Dracula x2\n' });
    expect(mail.html).toBe('<p>Dear Tom &amp; &lt;Jerry&gt;,</p><ul><li>Dracula x2</li></ul>');
    await waitFor(async () => (await rowsTo(to))[0]?.status === 'SENT', { what: 'the e-mail marked sent' });
    expect((await rowsTo(to))[0]).toMatchObject({ subject: 'A note for Tom & <Jerry>', ...EMPTIED });
    await sender.stop();
  });

  it('adds what the preparer of the template gives at each attempt, keeping none of it; a preparer that owes nothing skips the e-mail', async () => {
    const [kept, skipped] = [`${randomUUID()}@example.com`, `${randomUUID()}@example.com`];
    await record(randomUUID(), kept);
    await record(randomUUID(), skipped);
    let prepared = 0;
    const preparer: MailPreparer = async (mail) => {
      if (mail.recipient === skipped) return null;
      if (mail.recipient !== kept) return {};
      expect(mail.data).toEqual({ name: 'Ada', lines: [{ title: 'Dracula', quantity: 2 }] });
      prepared += 1;
      return { name: `Ada, try ${prepared}` };
    };
    await mailbox.stop();
    const sender = startSender({ preparer });
    try {
      // An attempt counts from its claim (SENDING): two have ended once the second is no longer under way.
      await waitFor(
        async () => {
          const row = (await rowsTo(kept))[0];
          return row?.attempts >= 2 && row.status !== 'SENDING';
        },
        { what: 'two attempts ended with the SMTP server down' },
      );
      expect((await rowsTo(kept))[0].data).not.toContain('try');
    } finally {
      await mailbox.start();
    }
    await waitFor(async () => (await rowsTo(kept))[0]?.status === 'SENT', { what: 'the e-mail sent' });
    expect(received(kept).map((mail) => mail.subject)).toEqual([`A note for Ada, try ${prepared}`]);
    expect(prepared).toBeGreaterThanOrEqual(3);
    await waitFor(async () => (await rowsTo(skipped))[0]?.status === 'SKIPPED', { what: 'the e-mail owed to nobody skipped' });
    expect((await rowsTo(skipped))[0]).toMatchObject(EMPTIED);
    expect(received(skipped)).toEqual([]);
    await sender.stop();
  });

  it('does not send an e-mail whose time has passed, and keeps nothing of it', async () => {
    const to = `${randomUUID()}@example.com`;
    await record(randomUUID(), to, 'Ada', new Date(Date.now() - 1000));
    const sender = startSender();
    await waitFor(async () => (await rowsTo(to))[0]?.status === 'EXPIRED', { what: 'the e-mail expired' });
    expect((await rowsTo(to))[0]).toMatchObject({ attempts: 0, ...EMPTIED });
    expect(received(to)).toEqual([]);
    await sender.stop();
  });

  it('marks an e-mail the SMTP server refuses for good FAILED, and keeps nothing of it', async () => {
    const refusing = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo: (_address, _session, callback) => callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 })),
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    try {
      const to = `${randomUUID()}@example.com`;
      await record(randomUUID(), to);
      const sender = startSender({ url: `smtp://127.0.0.1:${(refusing.server.address() as AddressInfo).port}` });
      await waitFor(async () => (await rowsTo(to))[0]?.status === 'FAILED', { what: 'the e-mail refused' });
      expect((await rowsTo(to))[0]).toMatchObject({ attempts: 1, lastError: expect.stringMatching(/No such mailbox/), ...EMPTIED });
      await sender.stop();
    } finally {
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });
});
