import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

export class CreateRefunds1732000000510 implements MigrationInterface {
  name = 'CreateRefunds1732000000510';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'refunds',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'payment_id', type: 'varchar', length: '36' },
          { name: 'order_id', type: 'varchar', length: '36', isNullable: true },
          { name: 'origin', type: 'varchar', length: '80', isNullable: true, isUnique: true },
          { name: 'amount', type: 'decimal', precision: 12, scale: 2 },
          { name: 'reason', type: 'varchar', length: '32' },
          { name: 'note', type: 'varchar', length: '500', isNullable: true },
          { name: 'items', type: 'text' },
          { name: 'restock', type: 'boolean' },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'refusals', type: 'int' },
          { name: 'failure_code', type: 'varchar', length: '64', isNullable: true },
          { name: 'failure_reason', type: 'varchar', length: '255', isNullable: true },
          { name: 'provider_refund_id', type: 'varchar', length: '255', isNullable: true },
          { name: 'created_at', type: 'datetime', precision: 3 },
          { name: 'updated_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await queryRunner.createIndex('refunds', new TableIndex({ name: 'idx_refunds_payment', columnNames: ['payment_id'] }));
    await queryRunner.createIndex('refunds', new TableIndex({ name: 'idx_refunds_status_created', columnNames: ['status', 'created_at'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('refunds');
  }
}
