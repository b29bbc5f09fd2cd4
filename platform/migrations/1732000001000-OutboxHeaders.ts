/** The outbox keeps each event's message headers (the id of the request that caused it) beside its payload. */
import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

export class OutboxHeaders1732000001000 implements MigrationInterface {
  name = 'OutboxHeaders1732000001000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('outbox_events', new TableColumn({ name: 'headers', type: 'text', isNullable: true }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('outbox_events', 'headers');
  }
}
