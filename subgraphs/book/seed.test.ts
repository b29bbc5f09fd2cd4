import { MemoryBus } from '../../platform/events/memory-bus';
import { createLogger } from '../../platform/logger';
import { dropDatabases, testConfig } from '../../test/harness';
import { isbnProblem, normalizeIsbn } from './isbn';
import { createBookService } from './index';
import { DEMO_CATALOGUE } from './seed';

const config = testConfig();
const logger = createLogger('silent');

afterAll(() => dropDatabases(config, ['book']));

/** Builds the service on this file's own database, as a restart would, and answers its catalogue. */
async function catalogueAfterStart(seedDemoCatalogue?: boolean) {
  const service = await createBookService({ config, logger, bus: new MemoryBus(), ...(seedDemoCatalogue === undefined ? {} : { seedDemoCatalogue }) });
  try {
    const { books } = await service.books.listBooks({ offset: 0 });
    const [authors, categories, publishers] = await Promise.all([service.authors.list(), service.categories.list(), service.publishers.list()]);
    return { books, authors, categories, publishers };
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
    expect(await catalogueAfterStart()).toEqual({ books: [], authors: [], categories: [], publishers: [] });
    const first = await catalogueAfterStart(true);
    expect(first.books).toHaveLength(12);
    const second = await catalogueAfterStart(true);
    expect(second).toEqual(first);
    const authorName = (id: string) => {
      const author = first.authors.find((a) => a.id === id)!;
      return `${author.firstName} ${author.lastName}`;
    };
    const pride = first.books.find((book) => book.title === 'Pride and Prejudice')!;
    expect(pride).toMatchObject({ isbn: '9780141439518', price: 9.99, language: 'en', stock: 42 });
    expect(pride.authorIds.map(authorName)).toEqual(['Jane Austen']);
    expect(first.categories.find((c) => c.id === pride.categoryId)?.name).toBe('Classics');
    expect(first.publishers.find((p) => p.id === pride.publisherId)?.name).toBe('Penguin Classics');
    expect(first.books.find((book) => book.title === 'Good Omens')?.authorIds.map(authorName)).toEqual(['Terry Pratchett', 'Neil Gaiman']);
    expect(first.authors).toHaveLength(13);
    expect(first.categories.map((c) => c.name)).toEqual(['Classics', 'Dystopian Fiction', 'Fantasy', 'Gothic Fiction']);
  });
});
