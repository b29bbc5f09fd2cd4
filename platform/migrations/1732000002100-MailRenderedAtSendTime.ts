/**
 * The mail outbox keeps what a template is filled with and renders it at send time (platform/mail/):
 * no rendered body, and so no link with a live token, waits in it. Rows that a send or a refusal
 * settled lose the body they kept; rows still to send keep theirs and are sent as they are.
 */
import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

export class MailRenderedAtSendTime1732000002100 implements MigrationInterface {
  name = 'MailRenderedAtSendTime1732000002100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('mail_outbox', new TableColumn({ name: 'template_data', type: 'text', isNullable: true }));
    await queryRunner.addColumn('mail_outbox', new TableColumn({ name: 'expires_at', type: 'datetime', precision: 3, isNullable: true }));
    // An address a password reset is asked for is recorded as asked (up to 254 characters), known or not.
    await queryRunner.changeColumn('mail_outbox', 'recipient', new TableColumn({ name: 'recipient', type: 'varchar', length: '254' }));
    await queryRunner.query(`UPDATE mail_outbox SET body_text = '', body_html = '' WHERE status IN ('SENT', 'FAILED')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.changeColumn('mail_outbox', 'recipient', new TableColumn({ name: 'recipient', type: 'varchar', length: '100' }));
    await queryRunner.dropColumn('mail_outbox', 'expires_at');
    await queryRunner.dropColumn('mail_outbox', 'template_data');
  }
}
