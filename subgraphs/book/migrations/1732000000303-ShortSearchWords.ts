/**
 * MariaDB/MySQL: the search documents hold words of one or two letters padded to InnoDB's token
 * size from now on (search-text.ts INNODB_MIN_TOKEN_SIZE), so "of" in "The Picture of Dorian Gray"
 * is found there as on SQLite. The documents written before are removed here and written again,
 * padded, when the service starts (SearchIndex.indexMissing). SQLite's documents do not change.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ShortSearchWords1732000000303 implements MigrationInterface {
  name = 'ShortSearchWords1732000000303';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'mysql') await queryRunner.query('DELETE FROM book_search');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Unpadded documents are written again by the service that runs the earlier code.
    if (queryRunner.connection.driver.options.type === 'mysql') await queryRunner.query('DELETE FROM book_search');
  }
}
