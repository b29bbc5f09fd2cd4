import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Where the refund of a cancelled (or refunded) order stands; null when no refund is involved. */
export class OrderRefundStatus1732000000420 implements MigrationInterface {
  name = 'OrderRefundStatus1732000000420';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('orders', new TableColumn({ name: 'refund_status', type: 'varchar', length: '16', isNullable: true }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('orders', 'refund_status');
  }
}
