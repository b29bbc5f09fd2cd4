/**
 * Authors, categories and publishers become tables of their own (CONTRACT §4): a book points at
 * one publisher and one category and lists its authors in order; stock may be untracked (null);
 * a cover may be stored. The author names books carried are turned into authors rows.
 */
import { randomUUID } from 'node:crypto';
import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

const id = { name: 'id', type: 'varchar', length: '36', isPrimary: true };

/** "Charlotte Brontë" → first "Charlotte", last "Brontë"; a single word is a first name. */
function splitName(name: string): { firstName: string; lastName: string | null } {
  const words = name.trim().split(/\s+/);
  if (words.length === 1) return { firstName: words[0], lastName: null };
  return { firstName: words.slice(0, -1).join(' '), lastName: words[words.length - 1] };
}

export class Catalogue1732000000301 implements MigrationInterface {
  name = 'Catalogue1732000000301';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'authors',
        columns: [
          id,
          { name: 'first_name', type: 'varchar', length: '100' },
          { name: 'last_name', type: 'varchar', length: '100', isNullable: true },
          { name: 'biography', type: 'text', isNullable: true },
          { name: 'country', type: 'varchar', length: '100', isNullable: true },
          { name: 'name_key', type: 'varchar', length: '201' },
        ],
        indices: [new TableIndex({ name: 'uq_authors_name_key', columnNames: ['name_key'], isUnique: true })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'categories',
        columns: [
          id,
          { name: 'name', type: 'varchar', length: '100' },
          { name: 'description', type: 'text', isNullable: true },
          { name: 'name_key', type: 'varchar', length: '100' },
        ],
        indices: [new TableIndex({ name: 'uq_categories_name_key', columnNames: ['name_key'], isUnique: true })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'publishers',
        columns: [
          id,
          { name: 'name', type: 'varchar', length: '150' },
          { name: 'address', type: 'varchar', length: '500', isNullable: true },
          { name: 'name_key', type: 'varchar', length: '150' },
        ],
        indices: [new TableIndex({ name: 'uq_publishers_name_key', columnNames: ['name_key'], isUnique: true })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'book_authors',
        columns: [
          { name: 'book_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'author_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'position', type: 'int' },
        ],
        // "Books by this author" and "is this author still used".
        indices: [new TableIndex({ name: 'idx_book_authors_author', columnNames: ['author_id'] })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'order_stock',
        columns: [
          { name: 'order_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'book_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'taken', type: 'int' },
          { name: 'returned', type: 'boolean' },
        ],
      }),
    );

    await this.moveAuthorNames(queryRunner);

    await queryRunner.dropColumn('books', 'authors');
    await queryRunner.addColumns('books', [
      new TableColumn({ name: 'cover_key', type: 'varchar', length: '200', isNullable: true }),
      new TableColumn({ name: 'publisher_id', type: 'varchar', length: '36', isNullable: true }),
      new TableColumn({ name: 'category_id', type: 'varchar', length: '36', isNullable: true }),
    ]);
    await queryRunner.changeColumn('books', 'stock', new TableColumn({ name: 'stock', type: 'int', isNullable: true }));
    await queryRunner.changeColumn('books', 'published_date', new TableColumn({ name: 'published_date', type: 'varchar', length: '10', isNullable: true }));
    await queryRunner.changeColumn('books', 'language', new TableColumn({ name: 'language', type: 'varchar', length: '50' }));
    await queryRunner.createIndex('books', new TableIndex({ name: 'idx_books_category', columnNames: ['category_id'] }));
    await queryRunner.createIndex('books', new TableIndex({ name: 'idx_books_publisher', columnNames: ['publisher_id'] }));
  }

  /** Each distinct author name of the existing books becomes an author; the books point at them in order. */
  private async moveAuthorNames(queryRunner: QueryRunner): Promise<void> {
    const rows = (await queryRunner.query('SELECT id, authors FROM books')) as { id: string; authors: string }[];
    const authorIds = new Map<string, string>();
    for (const row of rows) {
      const names = (JSON.parse(row.authors) as string[]).map((name) => name.trim()).filter(Boolean);
      const seen = new Set<string>();
      let position = 0;
      for (const name of names) {
        const { firstName, lastName } = splitName(name);
        const nameKey = [firstName, lastName].filter(Boolean).join(' ').toLowerCase();
        let authorId = authorIds.get(nameKey);
        if (!authorId) {
          authorId = randomUUID();
          authorIds.set(nameKey, authorId);
          await queryRunner.query('INSERT INTO authors (id, first_name, last_name, name_key) VALUES (?, ?, ?, ?)', [authorId, firstName, lastName, nameKey]);
        }
        if (seen.has(authorId)) continue;
        seen.add(authorId);
        await queryRunner.query('INSERT INTO book_authors (book_id, author_id, position) VALUES (?, ?, ?)', [row.id, authorId, position]);
        position += 1;
      }
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('books', 'idx_books_publisher');
    await queryRunner.dropIndex('books', 'idx_books_category');
    await queryRunner.dropColumns('books', ['cover_key', 'publisher_id', 'category_id']);
    await queryRunner.addColumn('books', new TableColumn({ name: 'authors', type: 'text', default: "'[]'" }));
    for (const table of ['order_stock', 'book_authors', 'publishers', 'categories', 'authors']) await queryRunner.dropTable(table);
  }
}
