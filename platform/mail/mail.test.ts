/**
 * The mail outbox and its sender against a real SMTP server in the test process, on the run's
 * database: an e-mail is recorded once per cause, survives the SMTP server being down, and reaches
 * it exactly once, however many senders share the outbox.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
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
import { MailSender } from './sender';
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

function startSender(): MailSender {
  const sender = new MailSender({ db, logger, smtpUrl, from: 'Shop <shop@example.com>', retryBaseMs: 20, retryMaxMs: 100 });
  senders.push(sender);
  sender.start();
  return sender;
}

function record(cause: string, to: string, name = 'Ada'): Promise<boolean> {
  return db.transaction((manager) => enqueueMail(manager, templates, { cause, template: 'note', to, data: { name, lines: [{ title: 'Dracula', quantity: 2 }] } }));
}

const received = (to: string) => mailbox.received.filter((mail) => mail.to.includes(to));
const rowsTo = (to: string) => db.manager.find(OutgoingMail, { where: { recipient: to } });

describe('the mail outbox', () => {
  it('renders both parts, escaping values in the HTML only', async () => {
    const to = `${randomUUID()}@example.com`;
    await record(randomUUID(), to, 'Tom & <Jerry>');
    const [row] = await rowsTo(to);
    expect(row.subject).toBe('A note for Tom & <Jerry>');
    expect(row.text).toBe('Dear Tom & <Jerry>,\n- Dracula x2\n');
    expect(row.html).toBe('<p>Dear Tom &amp; &lt;Jerry&gt;,</p><ul><li>Dracula x2</li></ul>');
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
    expect(rows.map((row) => [row.text, row.html])).toEqual([
      ['', ''],
      ['', ''],
      ['', ''],
    ]);
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
});
