import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

export class CreateAuthTables1732000000200 implements MigrationInterface {
  name = 'CreateAuthTables1732000000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'auth_accounts',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'email', type: 'varchar', length: '100', isUnique: true },
          { name: 'password_hash', type: 'varchar', length: '100' },
          { name: 'role', type: 'varchar', length: '10' },
          { name: 'status', type: 'varchar', length: '10' },
          { name: 'created_at', type: 'datetime', precision: 3 },
          { name: 'updated_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'auth_sessions',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '36' },
          { name: 'device_id', type: 'varchar', length: '64' },
          { name: 'device_name', type: 'varchar', length: '120' },
          { name: 'created_at', type: 'datetime', precision: 3 },
          { name: 'revoked_at', type: 'datetime', precision: 3, isNullable: true },
          { name: 'revoke_reason', type: 'varchar', length: '30', isNullable: true },
        ],
      }),
    );
    await queryRunner.createIndex('auth_sessions', new TableIndex({ name: 'idx_auth_sessions_user_device', columnNames: ['user_id', 'device_id'] }));
    await queryRunner.createTable(
      new Table({
        name: 'auth_refresh_tokens',
        columns: [
          { name: 'token_hash', type: 'varchar', length: '64', isPrimary: true },
          { name: 'session_id', type: 'varchar', length: '36' },
          { name: 'expires_at', type: 'datetime', precision: 3 },
          { name: 'rotated_at', type: 'datetime', precision: 3, isNullable: true },
          { name: 'created_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await queryRunner.createIndex('auth_refresh_tokens', new TableIndex({ name: 'idx_auth_refresh_tokens_session', columnNames: ['session_id'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('auth_refresh_tokens');
    await queryRunner.dropTable('auth_sessions');
    await queryRunner.dropTable('auth_accounts');
  }
}
