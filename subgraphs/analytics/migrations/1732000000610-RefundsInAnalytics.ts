import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Partial refunds (CONTRACT §11): each payment fact records its succeeded refunds, and each day
 * counts the refunds that succeeded on it and their amount. Existing facts have no refund yet, so
 * the aggregates need no rebuild.
 */
export class RefundsInAnalytics1732000000610 implements MigrationInterface {
  name = 'RefundsInAnalytics1732000000610';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('analytics_payment_facts', new TableColumn({ name: 'refunds', type: 'text', isNullable: true }));
    await queryRunner.addColumns('analytics_daily', [
      new TableColumn({ name: 'refunds', type: 'bigint', default: 0 }),
      new TableColumn({ name: 'refunds_cents', type: 'bigint', default: 0 }),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumns('analytics_daily', ['refunds_cents', 'refunds']);
    await queryRunner.dropColumn('analytics_payment_facts', 'refunds');
  }
}
