/** The outbox and the applied-events record, shared by every service that publishes or consumes. */
import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { autoIncrementKey } from '../database';

export class EventTables1732000000000 implements MigrationInterface {
  name = 'EventTables1732000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'outbox_events',
        columns: [
          autoIncrementKey(queryRunner, 'id'),
          { name: 'event_id', type: 'varchar', length: '36' },
          { name: 'topic', type: 'varchar', length: '120' },
          { name: 'message_key', type: 'varchar', length: '120' },
          { name: 'payload', type: 'text' },
          { name: 'created_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'processed_events',
        columns: [
          { name: 'consumer', type: 'varchar', length: '120', isPrimary: true },
          { name: 'event_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'processed_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('processed_events');
    await queryRunner.dropTable('outbox_events');
  }
}
