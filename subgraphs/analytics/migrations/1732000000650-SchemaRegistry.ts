import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The schema registry (CONTRACT §13): schema versions with their subgraph SDLs, and field usage by
 * operation, client and hour. A supergraph outgrows TEXT's 64 kB on MySQL, so SDLs are MEDIUMTEXT there.
 */
export class SchemaRegistry1732000000650 implements MigrationInterface {
  name = 'SchemaRegistry1732000000650';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sdl = queryRunner.connection.driver.options.type === 'mysql' ? 'mediumtext' : 'text';
    const timestamp = (name: string, isNullable = false) => ({ name, type: 'datetime', precision: 3, isNullable });
    await queryRunner.createTable(
      new Table({
        name: 'registry_schema_versions',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'supergraph_hash', type: 'varchar', length: '64', isUnique: true },
          { name: 'supergraph_sdl', type: sdl },
          { name: 'commit_sha', type: 'varchar', length: '64', isNullable: true },
          { name: 'published_by', type: 'varchar', length: '255', isNullable: true },
          timestamp('recorded_at'),
          timestamp('published_at', true),
          timestamp('served_at', true),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'registry_schema_subgraphs',
        columns: [
          { name: 'version_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'name', type: 'varchar', length: '64', isPrimary: true },
          { name: 'url', type: 'varchar', length: '2048', isNullable: true },
          { name: 'sdl', type: sdl },
        ],
      }),
    );
    const operation = [
      { name: 'operation_hash', type: 'varchar', length: '64', isPrimary: true },
      { name: 'operation_name', type: 'varchar', length: '255', isPrimary: true },
    ];
    await queryRunner.createTable(new Table({ name: 'registry_usage_operations', columns: [...operation, { name: 'operation_type', type: 'varchar', length: '12' }] }));
    await queryRunner.createTable(
      new Table({ name: 'registry_usage_coordinates', columns: [...operation, { name: 'coordinate', type: 'varchar', length: '255', isPrimary: true }] }),
    );
    // Who uses a coordinate: the schema check's and the admin page's question.
    await queryRunner.createIndex('registry_usage_coordinates', new TableIndex({ name: 'idx_usage_coordinate', columnNames: ['coordinate'] }));
    await queryRunner.createTable(
      new Table({
        name: 'registry_usage_hourly',
        columns: [
          { name: 'hour', type: 'varchar', length: '20', isPrimary: true },
          ...operation,
          { name: 'client_name', type: 'varchar', length: '128', isPrimary: true },
          { name: 'client_version', type: 'varchar', length: '64', isPrimary: true },
          { name: 'count', type: 'bigint', default: 0 },
        ],
      }),
    );
    // The operations a window's usage names, and whether an operation is still used at all (pruning).
    await queryRunner.createIndex('registry_usage_hourly', new TableIndex({ name: 'idx_usage_hourly_operation', columnNames: ['operation_hash', 'operation_name', 'hour'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['registry_usage_hourly', 'registry_usage_coordinates', 'registry_usage_operations', 'registry_schema_subgraphs', 'registry_schema_versions']) {
      await queryRunner.dropTable(table);
    }
  }
}
