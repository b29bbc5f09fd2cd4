import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Whether the profile's owner verified the address (the auth service's `email-verified`). */
export class ProfileEmailVerified1732000000110 implements MigrationInterface {
  name = 'ProfileEmailVerified1732000000110';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('user_profiles', new TableColumn({ name: 'email_verified', type: 'boolean', default: false }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('user_profiles', 'email_verified');
  }
}
