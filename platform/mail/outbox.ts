/**
 * Recording an e-mail: rendered and inserted into the mail outbox inside the caller's transaction,
 * so it is owed exactly when the change that causes it commits. A second e-mail under the same key
 * (the same event handled again) is not recorded.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { OutgoingMail } from './entities';
import type { MailTemplates, TemplateData } from './templates';

export interface MailRequest {
  /** What caused the e-mail: an event id, a token id; with the template it makes the unique key. */
  cause: string;
  template: string;
  to: string;
  data: TemplateData;
}

/** Resolves with whether the e-mail was recorded (false: one with the same cause and template already was). */
export async function enqueueMail(manager: EntityManager, templates: MailTemplates, request: MailRequest): Promise<boolean> {
  if (!manager.queryRunner?.isTransactionActive) throw new Error(`The ${request.template} e-mail must be recorded inside the transaction of its cause`);
  const mailKey = `${request.cause}:${request.template}`;
  if (await manager.exists(OutgoingMail, { where: { mailKey } })) return false;
  const rendered = templates.render(request.template, request.data);
  const now = new Date();
  await manager.insert(OutgoingMail, {
    id: randomUUID(),
    mailKey,
    template: request.template,
    recipient: request.to,
    subject: rendered.subject.slice(0, 200),
    text: rendered.text,
    html: rendered.html,
    status: 'PENDING',
    attempts: 0,
    nextAttemptAt: now,
    claimedUntil: null,
    messageId: null,
    lastError: null,
    createdAt: now,
    sentAt: null,
  });
  return true;
}
