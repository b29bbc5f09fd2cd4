import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

export class CreateUserProfiles1732000000100 implements MigrationInterface {
  name = 'CreateUserProfiles1732000000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'user_profiles',
        columns: [
          { name: 'user_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'email', type: 'varchar', length: '100', isUnique: true },
          { name: 'first_name', type: 'varchar', length: '50' },
          { name: 'last_name', type: 'varchar', length: '50' },
          { name: 'phone_number', type: 'varchar', length: '16' },
          { name: 'date_of_birth', type: 'varchar', length: '10' },
          { name: 'address', type: 'varchar', length: '255' },
          { name: 'created_at', type: 'datetime', precision: 3 },
          { name: 'updated_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await queryRunner.createIndex('user_profiles', new TableIndex({ name: 'idx_user_profiles_created', columnNames: ['created_at'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('user_profiles');
  }
}
