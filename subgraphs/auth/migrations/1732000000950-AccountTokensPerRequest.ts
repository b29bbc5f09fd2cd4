import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Account tokens are made when their e-mail is sent, one per attempt at sending it: each records when
 * its e-mail was asked for, so a newer request replaces the tokens of the older ones only.
 */
export class AccountTokensPerRequest1732000000950 implements MigrationInterface {
  name = 'AccountTokensPerRequest1732000000950';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('auth_account_tokens', new TableColumn({ name: 'requested_at', type: 'datetime', precision: 3, isNullable: true }));
    await queryRunner.query('UPDATE auth_account_tokens SET requested_at = created_at');
    await queryRunner.changeColumn('auth_account_tokens', 'requested_at', new TableColumn({ name: 'requested_at', type: 'datetime', precision: 3 }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('auth_account_tokens', 'requested_at');
  }
}
