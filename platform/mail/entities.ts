/**
 * The mail outbox: each e-mail a service owes, rendered, recorded in the transaction of the change
 * (or of the consumed event) that caused it, and delivered by the sender loop (sender.ts). `mailKey`
 * is unique: what caused the e-mail (an event id, a token id) and the template, so one cause never
 * owes two e-mails.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../database';

/** PENDING: to send (again, from `nextAttemptAt`); SENDING: claimed by a sender until `claimedUntil`; SENT; FAILED: refused for good by the SMTP server. */
export type MailStatus = 'PENDING' | 'SENDING' | 'SENT' | 'FAILED';

@Entity({ name: 'mail_outbox' })
export class OutgoingMail {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'mail_key', type: 'varchar', length: 160, unique: true })
  mailKey!: string;

  @Column({ type: 'varchar', length: 60 })
  template!: string;

  @Column({ type: 'varchar', length: 100 })
  recipient!: string;

  @Column({ type: 'varchar', length: 200 })
  subject!: string;

  /** Emptied once sent: a link with a token lives no longer than it must. */
  @Column({ name: 'body_text', type: 'text' })
  text!: string;

  @Column({ name: 'body_html', type: 'text' })
  html!: string;

  @Column({ type: 'varchar', length: 10 })
  status!: MailStatus;

  @Column({ type: 'int' })
  attempts!: number;

  @TimestampColumn('next_attempt_at')
  nextAttemptAt!: Date;

  @TimestampColumn('claimed_until', { nullable: true })
  claimedUntil!: Date | null;

  @Column({ name: 'message_id', type: 'varchar', length: 200, nullable: true })
  messageId!: string | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError!: string | null;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('sent_at', { nullable: true })
  sentAt!: Date | null;
}
