/**
 * The mail outbox: each e-mail a service owes, recorded in the transaction of the change (or of the
 * consumed event) that caused it, and rendered and delivered by the sender loop (sender.ts). A row
 * holds what its template is filled with, nothing secret: what only the moment of sending may know
 * (a token's link) is added then by the service. `mailKey` is unique: what caused the e-mail (an
 * event id, a request id) and the template, so one cause never owes two e-mails.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../database';

/**
 * PENDING: to send (again, from `nextAttemptAt`); SENDING: claimed by a sender until `claimedUntil`;
 * SENT; FAILED: refused for good by the SMTP server; EXPIRED: not sent by `expiresAt`; SKIPPED: no
 * longer owed when its turn came (a reset asked for an address no account has).
 */
export type MailStatus = 'PENDING' | 'SENDING' | 'SENT' | 'FAILED' | 'EXPIRED' | 'SKIPPED';

@Entity({ name: 'mail_outbox' })
export class OutgoingMail {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'mail_key', type: 'varchar', length: 160, unique: true })
  mailKey!: string;

  @Column({ type: 'varchar', length: 60 })
  template!: string;

  /** As asked for: an address a password reset was asked for may belong to no account. */
  @Column({ type: 'varchar', length: 254 })
  recipient!: string;

  /** Empty until sent, then the subject it was sent with. */
  @Column({ type: 'varchar', length: 200 })
  subject!: string;

  /** What the template is filled with (JSON); null once the row's status is final. */
  @Column({ name: 'template_data', type: 'text', nullable: true })
  data!: string | null;

  /**
   * The rendered parts of a row recorded before e-mails were rendered at send time; empty for every
   * other row, and emptied with the data.
   */
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

  /** Not sent from then on (the link it would carry is no longer worth sending); null: owed for as long as it takes. */
  @TimestampColumn('expires_at', { nullable: true })
  expiresAt!: Date | null;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('sent_at', { nullable: true })
  sentAt!: Date | null;
}
