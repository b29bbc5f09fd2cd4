import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** A checkout's stock hold (CONTRACT §4): its id, its number, when it ends; the expiry sweep's index. */
export class StockHolds1732000000530 implements MigrationInterface {
  name = 'StockHolds1732000000530';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('payments', [
      new TableColumn({ name: 'hold_id', type: 'varchar', length: '36', isNullable: true }),
      new TableColumn({ name: 'hold_no', type: 'int', default: 0 }),
      new TableColumn({ name: 'hold_expires_at', type: 'datetime', precision: 3, isNullable: true }),
      // Payments made before had theirs published with their intent, and attach none again.
      new TableColumn({ name: 'created_published', type: 'boolean', default: false }),
    ]);
    await queryRunner.createIndex('payments', new TableIndex({ name: 'idx_payments_hold_expiry', columnNames: ['status', 'hold_expires_at'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('payments', 'idx_payments_hold_expiry');
    await queryRunner.dropColumns('payments', ['hold_id', 'hold_no', 'hold_expires_at', 'created_published']);
  }
}
