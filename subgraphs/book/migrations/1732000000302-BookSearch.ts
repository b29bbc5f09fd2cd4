/**
 * The full-text search's tables (search-index.ts): one search document per book, indexed by the
 * database's own engine, and the vocabulary of indexed words the typo rule corrects against.
 *
 * SQLite: `book_search` holds the documents and an FTS5 table indexes them as its external content,
 * kept in step by triggers (the FTS5 manual's pattern), so the service writes one table on either
 * database. MariaDB/MySQL: InnoDB FULLTEXT indexes on `book_search`, one over every column to filter
 * and one per column to score; built without the stopword list, so "the" or "it" in a title is a
 * word like any other. InnoDB does not index words under innodb_ft_min_token_size (3) letters.
 *
 * Documents of the existing books are written when the service starts (SearchIndex.indexMissing),
 * by the same code that writes them afterwards.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';

const COLUMNS = ['title', 'authors', 'description', 'extra'];

export class BookSearch1732000000302 implements MigrationInterface {
  name = 'BookSearch1732000000302';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'mysql') await this.upMysql(queryRunner);
    else await this.upSqlite(queryRunner);
  }

  private async upMysql(queryRunner: QueryRunner): Promise<void> {
    // The stopword setting is read when a FULLTEXT index is created, on this connection only.
    const [{ stopwords }] = (await queryRunner.query('SELECT @@SESSION.innodb_ft_enable_stopword AS stopwords')) as { stopwords: number }[];
    await queryRunner.query('SET SESSION innodb_ft_enable_stopword = 0');
    try {
      await queryRunner.query(
        `CREATE TABLE book_search (
          id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
          book_id VARCHAR(36) NOT NULL,
          ${COLUMNS.map((column) => `${column} TEXT NOT NULL`).join(', ')},
          UNIQUE KEY uq_book_search_book (book_id),
          FULLTEXT KEY ft_book_search_all (${COLUMNS.join(', ')}),
          ${COLUMNS.map((column) => `FULLTEXT KEY ft_book_search_${column} (${column})`).join(', ')}
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
      );
    } finally {
      await queryRunner.query(`SET SESSION innodb_ft_enable_stopword = ${Number(stopwords) ? 1 : 0}`);
    }
    // Compared byte for byte: the words are already folded, and the typo rule wants exact words.
    await queryRunner.query('CREATE TABLE book_search_terms (term VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY) ENGINE=InnoDB');
  }

  private async upSqlite(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE book_search (id INTEGER PRIMARY KEY AUTOINCREMENT, book_id VARCHAR(36) NOT NULL UNIQUE, ${COLUMNS.map((column) => `${column} TEXT NOT NULL`).join(', ')})`,
    );
    await queryRunner.query(`CREATE VIRTUAL TABLE book_search_fts USING fts5(${COLUMNS.join(', ')}, content='book_search', content_rowid='id')`);
    const values = (row: 'new' | 'old') => COLUMNS.map((column) => `${row}.${column}`).join(', ');
    const insert = `INSERT INTO book_search_fts (rowid, ${COLUMNS.join(', ')}) VALUES (new.id, ${values('new')});`;
    const remove = `INSERT INTO book_search_fts (book_search_fts, rowid, ${COLUMNS.join(', ')}) VALUES ('delete', old.id, ${values('old')});`;
    await queryRunner.query(`CREATE TRIGGER book_search_ai AFTER INSERT ON book_search BEGIN ${insert} END`);
    await queryRunner.query(`CREATE TRIGGER book_search_ad AFTER DELETE ON book_search BEGIN ${remove} END`);
    await queryRunner.query(`CREATE TRIGGER book_search_au AFTER UPDATE ON book_search BEGIN ${remove} ${insert} END`);
    await queryRunner.query('CREATE TABLE book_search_terms (term VARCHAR(64) NOT NULL PRIMARY KEY) WITHOUT ROWID');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type !== 'mysql') {
      for (const trigger of ['book_search_ai', 'book_search_ad', 'book_search_au']) await queryRunner.query(`DROP TRIGGER ${trigger}`);
      await queryRunner.query('DROP TABLE book_search_fts');
    }
    await queryRunner.query('DROP TABLE book_search_terms');
    await queryRunner.query('DROP TABLE book_search');
  }
}
