import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** The ids of registrations removed before they completed, looked up by email at the next registration. */
export class AbandonedRegistrations1732000000910 implements MigrationInterface {
  name = 'AbandonedRegistrations1732000000910';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'auth_abandoned_registrations',
        columns: [
          { name: 'user_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'email', type: 'varchar', length: '100' },
          { name: 'abandoned_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await queryRunner.createIndex('auth_abandoned_registrations', new TableIndex({ name: 'idx_auth_abandoned_registrations_email', columnNames: ['email'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('auth_abandoned_registrations');
  }
}
