/**
 * Recording an e-mail: inserted into the mail outbox inside the caller's transaction, so it is owed
 * exactly when the change that causes it commits. The row keeps the template's data and is rendered
 * when it is sent (sender.ts). A second e-mail under the same key (the same event handled again) is
 * not recorded.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { OutgoingMail } from './entities';
import type { MailTemplates, TemplateData } from './templates';

export interface MailRequest {
  /** What caused the e-mail: an event id, a request id; with the template it makes the unique key. */
  cause: string;
  template: string;
  to: string;
  /**
   * What the template is filled with. Nothing secret: it waits in the outbox until sent. What only
   * the moment of sending may know (a token's link) the service's preparer adds then.
   */
  data: TemplateData;
  /** Not sent from then on; by default owed for as long as it takes. */
  expiresAt?: Date;
}

/** Resolves with whether the e-mail was recorded (false: one with the same cause and template already was). */
export async function enqueueMail(manager: EntityManager, templates: MailTemplates, request: MailRequest): Promise<boolean> {
  if (!manager.queryRunner?.isTransactionActive) throw new Error(`The ${request.template} e-mail must be recorded inside the transaction of its cause`);
  // A missing template fails the cause's transaction, not the sender later.
  templates.check(request.template);
  const mailKey = `${request.cause}:${request.template}`;
  if (await manager.exists(OutgoingMail, { where: { mailKey } })) return false;
  const now = new Date();
  await manager.insert(OutgoingMail, {
    id: randomUUID(),
    mailKey,
    template: request.template,
    recipient: request.to,
    subject: '',
    data: JSON.stringify(request.data),
    text: '',
    html: '',
    status: 'PENDING',
    attempts: 0,
    nextAttemptAt: now,
    claimedUntil: null,
    messageId: null,
    lastError: null,
    expiresAt: request.expiresAt ?? null,
    createdAt: now,
    sentAt: null,
  });
  return true;
}
