import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

export class CreateOrders1732000000400 implements MigrationInterface {
  name = 'CreateOrders1732000000400';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'orders',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'payment_id', type: 'varchar', length: '36', isUnique: true },
          { name: 'user_id', type: 'varchar', length: '36' },
          { name: 'total_amount', type: 'decimal', precision: 12, scale: 2 },
          { name: 'status', type: 'varchar', length: '12' },
          { name: 'created_at', type: 'datetime', precision: 3 },
          { name: 'updated_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await queryRunner.createIndex('orders', new TableIndex({ name: 'idx_orders_user_created', columnNames: ['user_id', 'created_at'] }));
    await queryRunner.createIndex('orders', new TableIndex({ name: 'idx_orders_created', columnNames: ['created_at'] }));
    await queryRunner.createTable(
      new Table({
        name: 'order_items',
        columns: [
          { name: 'order_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'book_id', type: 'varchar', length: '36' },
          { name: 'book_title', type: 'varchar', length: '255' },
          { name: 'quantity', type: 'int' },
          { name: 'unit_price', type: 'decimal', precision: 12, scale: 2 },
          { name: 'position', type: 'int', isPrimary: true },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('order_items');
    await queryRunner.dropTable('orders');
  }
}
