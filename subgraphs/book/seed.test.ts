import fs from 'node:fs';
import { databaseName } from '../../platform/database';
import { createLogger } from '../../platform/logger';
import { testConfig } from '../../test/harness';
import { isbnProblem, normalizeIsbn } from './isbn';
import { createBookService } from './index';
import { DEMO_CATALOGUE } from './seed';

const config = testConfig();
const logger = createLogger('silent');

afterAll(async () => {
  fs.rmSync(config.dataDir, { recursive: true, force: true });
  if (!config.dbUrl) return;
  const mysql = await import('mysql2/promise');
  const connection = await mysql.createConnection({ uri: config.dbUrl });
  await connection.query(`DROP DATABASE IF EXISTS \`${databaseName({ service: 'book', config })}\``);
  await connection.end();
});

/** Builds the service on this file's own database, as a restart would, and answers its catalogue. */
async function catalogueAfterStart(seedDemoCatalogue?: boolean) {
  const service = await createBookService({ config, logger, ...(seedDemoCatalogue === undefined ? {} : { seedDemoCatalogue }) });
  try {
    return await service.books.listBooks({ limit: 100, offset: 0 });
  } finally {
    await service.stop();
  }
}

describe('the demo catalogue', () => {
  it('is a dozen books with valid ISBN-13s, and distinct ones', () => {
    expect(DEMO_CATALOGUE).toHaveLength(12);
    const isbns = DEMO_CATALOGUE.map((book) => normalizeIsbn(book.isbn));
    expect(isbns.every((isbn) => isbn.length === 13 && isbnProblem(isbn) === undefined)).toBe(true);
    expect(new Set(isbns).size).toBe(12);
  });

  it('is off by default, and seeded once however often the service starts with it on', async () => {
    expect(await catalogueAfterStart()).toEqual([]);
    const first = await catalogueAfterStart(true);
    expect(first).toHaveLength(12);
    const second = await catalogueAfterStart(true);
    expect(second).toEqual(first);
    expect(first.find((book) => book.title === 'Pride and Prejudice')).toMatchObject({
      isbn: '9780141439518',
      authors: ['Jane Austen'],
      price: 9.99,
      language: 'en',
    });
    expect(first.find((book) => book.title === 'Good Omens')?.authors).toEqual(['Terry Pratchett', 'Neil Gaiman']);
  });
});
