import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

export class CreatePayments1732000000500 implements MigrationInterface {
  name = 'CreatePayments1732000000500';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'payments',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'checkout_id', type: 'varchar', length: '36', isUnique: true },
          { name: 'user_id', type: 'varchar', length: '36' },
          { name: 'cart_fingerprint', type: 'varchar', length: '64' },
          { name: 'amount', type: 'decimal', precision: 12, scale: 2 },
          { name: 'currency', type: 'varchar', length: '3' },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'payment_intent_id', type: 'varchar', length: '255', isNullable: true, isUnique: true },
          { name: 'client_secret', type: 'varchar', length: '255', isNullable: true },
          { name: 'order_id', type: 'varchar', length: '36', isNullable: true },
          { name: 'paid_at', type: 'datetime', precision: 3, isNullable: true },
          { name: 'failure_reason', type: 'varchar', length: '255', isNullable: true },
          { name: 'customer_email', type: 'varchar', length: '100' },
          { name: 'customer_first_name', type: 'varchar', length: '50' },
          { name: 'customer_phone', type: 'varchar', length: '16' },
          { name: 'created_at', type: 'datetime', precision: 3 },
          { name: 'updated_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await queryRunner.createIndex('payments', new TableIndex({ name: 'idx_payments_user_created', columnNames: ['user_id', 'created_at'] }));
    await queryRunner.createTable(
      new Table({
        name: 'payment_items',
        columns: [
          { name: 'payment_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'position', type: 'int', isPrimary: true },
          { name: 'book_id', type: 'varchar', length: '36' },
          { name: 'book_title', type: 'varchar', length: '255' },
          { name: 'quantity', type: 'int' },
          { name: 'unit_price', type: 'decimal', precision: 12, scale: 2 },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'provider_events',
        columns: [
          { name: 'id', type: 'varchar', length: '255', isPrimary: true },
          { name: 'type', type: 'varchar', length: '100' },
          { name: 'payment_id', type: 'varchar', length: '36', isNullable: true },
          { name: 'outcome', type: 'varchar', length: '20' },
          { name: 'received_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('provider_events');
    await queryRunner.dropTable('payment_items');
    await queryRunner.dropTable('payments');
  }
}
