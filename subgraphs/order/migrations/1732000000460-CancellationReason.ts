import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Why an order was cancelled when it was not the customer or an admin: a paid order whose copies were gone (CONTRACT §6). */
export class CancellationReason1732000000460 implements MigrationInterface {
  name = 'CancellationReason1732000000460';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('orders', new TableColumn({ name: 'cancellation_reason', type: 'varchar', length: '500', isNullable: true }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('orders', 'cancellation_reason');
  }
}
