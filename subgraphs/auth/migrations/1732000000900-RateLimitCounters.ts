/** The auth limiter's counters, shared by the replicas (platform/rate-limit-store.ts). */
import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { RATE_LIMIT_TABLE } from '../../../platform/rate-limit-store';

export class RateLimitCounters1732000000900 implements MigrationInterface {
  name = 'RateLimitCounters1732000000900';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: RATE_LIMIT_TABLE,
        columns: [
          { name: 'counter_key', type: 'varchar', length: '191', isPrimary: true },
          { name: 'hits', type: 'int' },
          { name: 'reset_at_ms', type: 'bigint' },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable(RATE_LIMIT_TABLE);
  }
}
