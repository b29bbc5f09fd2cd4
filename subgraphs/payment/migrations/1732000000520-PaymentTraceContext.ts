import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/** The trace context of the checkout that created a payment, for the provider's webhooks to link to. */
export class PaymentTraceContext1732000000520 implements MigrationInterface {
  name = 'PaymentTraceContext1732000000520';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('payments', new TableColumn({ name: 'trace_parent', type: 'varchar', length: '64', isNullable: true }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('payments', 'trace_parent');
  }
}
