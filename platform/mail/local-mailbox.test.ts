import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { LocalMailbox, mailboxView, readMailbox } from './local-mailbox';
import { waitFor } from '../../test/wait';

describe('the local mailbox', () => {
  it('keeps what arrives over SMTP in its folder, and shows the newest first', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bookstore-mailbox-'));
    const mailbox = new LocalMailbox(dir);
    await mailbox.start(0);
    try {
      const transport = nodemailer.createTransport(mailbox.url);
      await transport.sendMail({ from: 'shop@bookstore.test', to: 'ada@example.com', subject: 'First', text: 'one' });
      await waitFor(() => readMailbox(dir).length, { what: 'the first e-mail kept', accept: (n) => n === 1 });
      await transport.sendMail({ from: 'shop@bookstore.test', to: ['ada@example.com', 'bob@example.com'], subject: 'Second', text: 'two', html: '<p>two</p>' });
      await waitFor(() => readMailbox(dir).length, { what: 'the second e-mail kept', accept: (n) => n === 2 });

      const view = mailboxView({ smtpUrl: mailbox.url, localMailbox: { dir } }, 1);
      expect(view).toMatchObject({ enabled: true, location: dir });
      expect(view.messages).toEqual([
        expect.objectContaining({ from: 'shop@bookstore.test', to: ['ada@example.com', 'bob@example.com'], subject: 'Second', text: 'two', html: '<p>two</p>' }),
      ]);
      expect(mailboxView({ smtpUrl: mailbox.url, localMailbox: { dir } }, 50).messages.map((mail) => mail.subject)).toEqual(['Second', 'First']);
    } finally {
      await mailbox.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is off when e-mail goes to an SMTP server, and names it without its credentials', () => {
    expect(mailboxView({ smtpUrl: 'smtps://user:secret@mail.example.com:465' }, 50)).toEqual({ enabled: false, location: 'smtps://mail.example.com:465', messages: [] });
    expect(mailboxView({}, 50)).toEqual({ enabled: false, location: null, messages: [] });
  });
});
