import type { MigrationInterface, QueryRunner } from 'typeorm';
import { loginFailuresTable } from './1732000000210-SessionsInUseAndLoginThrottle';

/**
 * The per-account login throttle now counts in the shared rate-limit table, with one atomic increment
 * per attempt; its own table goes. Counts in it are at most one window old and are not carried over.
 */
export class LoginAttemptsInRateLimitCounters1732000000920 implements MigrationInterface {
  name = 'LoginAttemptsInRateLimitCounters1732000000920';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('auth_login_failures');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(loginFailuresTable());
  }
}
