import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

const timestamp = (name: string, isNullable = false) => ({ name, type: 'datetime', precision: 3, isNullable });

/** Outbound webhooks (CONTRACT §11): endpoints, deliveries (one per endpoint and event) and their attempts. */
export class Webhooks1732000000440 implements MigrationInterface {
  name = 'Webhooks1732000000440';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'webhook_endpoints',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'url', type: 'varchar', length: '2048' },
          { name: 'description', type: 'varchar', length: '500', isNullable: true },
          { name: 'events', type: 'text' },
          { name: 'enabled', type: 'boolean' },
          { name: 'secret', type: 'varchar', length: '100' },
          { name: 'previous_secret', type: 'varchar', length: '100', isNullable: true },
          timestamp('previous_secret_expires_at', true),
          timestamp('failing_since', true),
          timestamp('disabled_at', true),
          { name: 'disabled_reason', type: 'varchar', length: '500', isNullable: true },
          timestamp('created_at'),
          timestamp('updated_at'),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'endpoint_id', type: 'varchar', length: '36' },
          { name: 'event_id', type: 'varchar', length: '36' },
          { name: 'type', type: 'varchar', length: '40' },
          { name: 'payload', type: 'text' },
          { name: 'status', type: 'varchar', length: '10' },
          { name: 'attempts', type: 'int' },
          { name: 'max_attempts', type: 'int' },
          timestamp('next_attempt_at', true),
          timestamp('claimed_until', true),
          { name: 'claim_token', type: 'varchar', length: '36', isNullable: true },
          { name: 'last_status_code', type: 'int', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '500', isNullable: true },
          { name: 'response_excerpt', type: 'text', isNullable: true },
          timestamp('created_at'),
          timestamp('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'uq_webhook_deliveries_endpoint_event', columnNames: ['endpoint_id', 'event_id'], isUnique: true }),
          new TableIndex({ name: 'ix_webhook_deliveries_due', columnNames: ['status', 'next_attempt_at'] }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_attempts',
        columns: [
          { name: 'delivery_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'number', type: 'int', isPrimary: true },
          timestamp('attempted_at'),
          { name: 'status_code', type: 'int', isNullable: true },
          { name: 'error', type: 'varchar', length: '500', isNullable: true },
          { name: 'response_excerpt', type: 'text', isNullable: true },
          { name: 'duration_ms', type: 'int' },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('webhook_attempts');
    await queryRunner.dropTable('webhook_deliveries');
    await queryRunner.dropTable('webhook_endpoints');
  }
}
