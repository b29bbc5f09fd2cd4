import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { autoIncrementKey } from '../../../platform/database';

/**
 * The logins in flight, one row each, numbered in the order they were taken (login-throttle.ts): the
 * per-account throttle counts failures in the rate-limit table and lets the logins wait their turn here.
 */
export class LoginTurns1732000000940 implements MigrationInterface {
  name = 'LoginTurns1732000000940';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'auth_login_turns',
        columns: [autoIncrementKey(queryRunner, 'turn'), { name: 'email', type: 'varchar', length: '100' }, { name: 'lease_until_ms', type: 'bigint' }],
      }),
    );
    await queryRunner.createIndex('auth_login_turns', new TableIndex({ name: 'idx_auth_login_turns_email', columnNames: ['email', 'turn'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('auth_login_turns');
  }
}
