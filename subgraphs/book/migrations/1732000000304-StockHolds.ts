import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Stock holds (CONTRACT §4): each checkout's claim on a book's copies, from the hold to the take. */
export class StockHolds1732000000304 implements MigrationInterface {
  name = 'StockHolds1732000000304';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'stock_holds',
        columns: [
          { name: 'payment_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'book_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'hold_id', type: 'varchar', length: '36', isNullable: true },
          { name: 'user_id', type: 'varchar', length: '36' },
          { name: 'status', type: 'varchar', length: '10' },
          { name: 'quantity', type: 'int' },
          { name: 'expires_at', type: 'datetime', precision: 3 },
          { name: 'taken', type: 'int' },
          { name: 'credited', type: 'int' },
          { name: 'returned', type: 'boolean' },
          { name: 'left_at_commit', type: 'int', isNullable: true },
          { name: 'created_at', type: 'datetime', precision: 3 },
          { name: 'updated_at', type: 'datetime', precision: 3 },
        ],
        indices: [
          // The copies held of a book, and a customer's holds.
          new TableIndex({ name: 'idx_stock_holds_book', columnNames: ['book_id', 'status', 'expires_at'] }),
          new TableIndex({ name: 'idx_stock_holds_user', columnNames: ['user_id', 'status'] }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('stock_holds');
  }
}
