import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Single-use tokens sent by e-mail (password reset, address verification) and when an account's address was verified. */
export class AccountTokensAndVerifiedEmail1732000000930 implements MigrationInterface {
  name = 'AccountTokensAndVerifiedEmail1732000000930';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('auth_accounts', new TableColumn({ name: 'email_verified_at', type: 'datetime', precision: 3, isNullable: true }));
    await queryRunner.createTable(
      new Table({
        name: 'auth_account_tokens',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'token_hash', type: 'varchar', length: '64', isUnique: true },
          { name: 'user_id', type: 'varchar', length: '36' },
          { name: 'purpose', type: 'varchar', length: '20' },
          { name: 'expires_at', type: 'datetime', precision: 3 },
          { name: 'used_at', type: 'datetime', precision: 3, isNullable: true },
          { name: 'created_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await queryRunner.createIndex('auth_account_tokens', new TableIndex({ name: 'idx_auth_account_tokens_user', columnNames: ['user_id', 'purpose'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('auth_account_tokens');
    await queryRunner.dropColumn('auth_accounts', 'email_verified_at');
  }
}
