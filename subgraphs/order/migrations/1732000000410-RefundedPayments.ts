import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Refunds reported by the payment service, kept so a payment-success that comes after its refund makes no order. */
export class RefundedPayments1732000000410 implements MigrationInterface {
  name = 'RefundedPayments1732000000410';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'order_refunded_payments',
        columns: [
          { name: 'payment_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'refunded_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('order_refunded_payments');
  }
}
