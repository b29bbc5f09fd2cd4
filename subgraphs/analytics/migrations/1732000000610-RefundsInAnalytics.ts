import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { rebuildAggregates } from '../ingest';

/**
 * Partial refunds (CONTRACT §11): each payment fact records its succeeded refunds, and each day
 * counts the refunds that succeeded on it and their amount.
 *
 * The rule changed with them: a refunded payment used to be left out of the day it was paid, it now
 * counts there and comes out of the day it was refunded. The aggregates kept under the old rule are
 * recomputed from the facts here (what `npm run analytics:rebuild` does), in the migration's
 * transaction, so that the next events adjust figures that agree with the new rule. `down` leaves
 * them as they are: rebuild them with the older code after going back.
 */
export class RefundsInAnalytics1732000000610 implements MigrationInterface {
  name = 'RefundsInAnalytics1732000000610';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('analytics_payment_facts', new TableColumn({ name: 'refunds', type: 'text', isNullable: true }));
    await queryRunner.addColumns('analytics_daily', [
      new TableColumn({ name: 'refunds', type: 'bigint', default: 0 }),
      new TableColumn({ name: 'refunds_cents', type: 'bigint', default: 0 }),
    ]);
    await rebuildAggregates(queryRunner.manager, queryRunner.connection.driver.options.type === 'mysql' ? 'mysql' : 'sqlite');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumns('analytics_daily', ['refunds_cents', 'refunds']);
    await queryRunner.dropColumn('analytics_payment_facts', 'refunds');
  }
}
