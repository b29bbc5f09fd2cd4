import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** The per-account failed-login counters as this migration made them (a later one drops them, and its `down` brings them back). */
export function loginFailuresTable(): Table {
  return new Table({
    name: 'auth_login_failures',
    columns: [
      { name: 'email', type: 'varchar', length: '100', isPrimary: true },
      { name: 'failures', type: 'int' },
      { name: 'window_started_at', type: 'datetime', precision: 3 },
    ],
  });
}

/** When each session was last used (login or refresh), recent revocations found fast, and the per-account failed-login counters. */
export class SessionsInUseAndLoginThrottle1732000000210 implements MigrationInterface {
  name = 'SessionsInUseAndLoginThrottle1732000000210';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('auth_sessions', new TableColumn({ name: 'last_used_at', type: 'datetime', precision: 3, isNullable: true }));
    await queryRunner.query('UPDATE auth_sessions SET last_used_at = created_at');
    await queryRunner.createIndex('auth_sessions', new TableIndex({ name: 'idx_auth_sessions_revoked_at', columnNames: ['revoked_at'] }));
    await queryRunner.createTable(loginFailuresTable());
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('auth_login_failures');
    await queryRunner.dropIndex('auth_sessions', 'idx_auth_sessions_revoked_at');
    await queryRunner.dropColumn('auth_sessions', 'last_used_at');
  }
}
