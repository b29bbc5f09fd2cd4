import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

export class CreateBooks1732000000300 implements MigrationInterface {
  name = 'CreateBooks1732000000300';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'books',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'isbn', type: 'varchar', length: '13' },
          { name: 'isbn13', type: 'varchar', length: '13' },
          { name: 'title', type: 'varchar', length: '255' },
          { name: 'authors', type: 'text' },
          { name: 'description', type: 'text', isNullable: true },
          { name: 'price', type: 'decimal', precision: 10, scale: 2 },
          { name: 'language', type: 'varchar', length: '2' },
          { name: 'published_date', type: 'varchar', length: '10' },
          { name: 'stock', type: 'int' },
          { name: 'search_text', type: 'text' },
          { name: 'created_at', type: 'datetime', precision: 3 },
          { name: 'updated_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await queryRunner.createIndex('books', new TableIndex({ name: 'uq_books_isbn13', columnNames: ['isbn13'], isUnique: true }));
    // The listing's order (title, then id).
    await queryRunner.createIndex('books', new TableIndex({ name: 'idx_books_title', columnNames: ['title', 'id'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('books');
  }
}
