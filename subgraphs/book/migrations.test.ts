import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../platform/database';
import { MemoryBus } from '../../platform/events/memory-bus';
import { EventTables1732000000000 } from '../../platform/migrations/1732000000000-EventTables';
import { createLogger } from '../../platform/logger';
import { dropDatabases, testConfig } from '../../test/harness';
import { createBookService } from './index';
import { CreateBooks1732000000300 } from './migrations/1732000000300-CreateBooks';

const config = testConfig();
const logger = createLogger('silent');

afterAll(() => dropDatabases(config, ['book']));

describe('the catalogue migration', () => {
  it('turns the author names books carried into authors, in order, and keeps every book and its stock', async () => {
    // A catalogue as the previous version left it: author names inside each book.
    const before = await openDatabase({ service: 'book', config, entities: [], migrations: [EventTables1732000000000, CreateBooks1732000000300] });
    const insert =
      'INSERT INTO books (id, isbn, isbn13, title, authors, description, price, language, published_date, stock, search_text, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
    const now = '2026-11-20 10:00:00.000';
    const [omens, nation] = [randomUUID(), randomUUID()];
    await before.dataSource.query(insert, [
      omens,
      '9780060853983',
      '9780060853983',
      'Good Omens',
      JSON.stringify(['Terry Pratchett', 'Neil Gaiman']),
      null,
      '16.99',
      'en',
      '2006-11-28',
      22,
      'good omens',
      now,
      now,
    ]);
    await before.dataSource.query(insert, [
      nation,
      '9780061433016',
      '9780061433016',
      'Nation',
      JSON.stringify(['Terry Pratchett']),
      null,
      '9.99',
      'en',
      '2008-09-30',
      4,
      'nation',
      now,
      now,
    ]);
    await before.close();

    const service = await createBookService({ config, logger, bus: new MemoryBus(), seedDemoCatalogue: false });
    try {
      const authors = await service.authors.list();
      expect(authors.map((a) => [a.firstName, a.lastName])).toEqual([
        ['Neil', 'Gaiman'],
        ['Terry', 'Pratchett'],
      ]);
      const id = (lastName: string) => authors.find((a) => a.lastName === lastName)!.id;
      const [goodOmens, nationBook] = await service.books.getBooks([omens, nation]);
      expect(goodOmens).toMatchObject({
        title: 'Good Omens',
        authorIds: [id('Pratchett'), id('Gaiman')],
        stock: 22,
        price: 16.99,
        categoryId: null,
        publisherId: null,
        coverImageUrl: null,
      });
      expect(nationBook).toMatchObject({ title: 'Nation', authorIds: [id('Pratchett')], stock: 4 });
      // The migrated books are found by their authors' names.
      expect((await service.books.listBooks({ q: 'gaiman', offset: 0 })).books.map((b) => b.id)).toEqual([omens]);
      // And by the full-text search: their documents are written when the service starts.
      const found = await service.books.searchBooks({ q: 'pratchett', limit: 10, offset: 0 });
      expect(found.total).toBe(2);
      expect(Object.fromEntries(found.books.map((b) => [b.id, b.highlights]))).toEqual({
        [omens]: { authors: 'Terry <mark>Pratchett</mark>, Neil Gaiman' },
        [nation]: { authors: 'Terry <mark>Pratchett</mark>' },
      });
    } finally {
      await service.stop();
    }
  });
});
