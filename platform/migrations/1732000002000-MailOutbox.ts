/** The mail outbox of the services that send e-mail (platform/mail/entities.ts). */
import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

export class MailOutbox1732000002000 implements MigrationInterface {
  name = 'MailOutbox1732000002000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'mail_outbox',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'mail_key', type: 'varchar', length: '160', isUnique: true },
          { name: 'template', type: 'varchar', length: '60' },
          { name: 'recipient', type: 'varchar', length: '100' },
          { name: 'subject', type: 'varchar', length: '200' },
          { name: 'body_text', type: 'text' },
          { name: 'body_html', type: 'text' },
          { name: 'status', type: 'varchar', length: '10' },
          { name: 'attempts', type: 'int' },
          { name: 'next_attempt_at', type: 'datetime', precision: 3 },
          { name: 'claimed_until', type: 'datetime', precision: 3, isNullable: true },
          { name: 'message_id', type: 'varchar', length: '200', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '500', isNullable: true },
          { name: 'created_at', type: 'datetime', precision: 3 },
          { name: 'sent_at', type: 'datetime', precision: 3, isNullable: true },
        ],
      }),
    );
    await queryRunner.createIndex('mail_outbox', new TableIndex({ name: 'idx_mail_outbox_due', columnNames: ['status', 'next_attempt_at'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('mail_outbox');
  }
}
