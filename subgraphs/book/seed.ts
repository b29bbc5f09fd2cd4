/**
 * The demo catalogue the embedded default starts with: a dozen classics with their real ISBN-13s,
 * their authors, categories and publishers, inserted only into an empty catalogue, so a restart or
 * a second instance adds nothing.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { parseBookRequest, type BookRequestDto } from './dto';
import { Author, Category, Publisher } from './entities';
import type { BookService } from './service';

/** A demo book as a reader names it: authors, category and publisher by name. */
export interface DemoBook extends Omit<BookRequestDto, 'authorIds' | 'categoryId' | 'publisherId'> {
  authors: string[];
  category: string;
  publisher: string;
}

export const DEMO_AUTHORS: readonly { firstName: string; lastName: string; country: string }[] = [
  { firstName: 'Jane', lastName: 'Austen', country: 'United Kingdom' },
  { firstName: 'Charlotte', lastName: 'Brontë', country: 'United Kingdom' },
  { firstName: 'Herman', lastName: 'Melville', country: 'United States' },
  { firstName: 'Mary', lastName: 'Shelley', country: 'United Kingdom' },
  { firstName: 'Charles', lastName: 'Dickens', country: 'United Kingdom' },
  { firstName: 'Emily', lastName: 'Brontë', country: 'United Kingdom' },
  { firstName: 'Bram', lastName: 'Stoker', country: 'Ireland' },
  { firstName: 'Oscar', lastName: 'Wilde', country: 'Ireland' },
  { firstName: 'Fyodor', lastName: 'Dostoevsky', country: 'Russia' },
  { firstName: 'George', lastName: 'Orwell', country: 'United Kingdom' },
  { firstName: 'F. Scott', lastName: 'Fitzgerald', country: 'United States' },
  { firstName: 'Terry', lastName: 'Pratchett', country: 'United Kingdom' },
  { firstName: 'Neil', lastName: 'Gaiman', country: 'United Kingdom' },
];

export const DEMO_CATEGORIES: readonly { name: string; description: string }[] = [
  { name: 'Classics', description: 'Novels that have stayed in print for generations.' },
  { name: 'Gothic Fiction', description: 'Dark houses, monsters and the uncanny.' },
  { name: 'Dystopian Fiction', description: 'Societies gone wrong.' },
  { name: 'Fantasy', description: 'Worlds with magic in them, or angels and demons in this one.' },
];

export const DEMO_PUBLISHERS: readonly { name: string; address: string }[] = [
  { name: 'Penguin Classics', address: '80 Strand, London WC2R 0RL, United Kingdom' },
  { name: 'Signet Classics', address: '1745 Broadway, New York, NY 10019, United States' },
  { name: 'Scribner', address: '1230 Avenue of the Americas, New York, NY 10020, United States' },
  { name: 'HarperCollins', address: '195 Broadway, New York, NY 10007, United States' },
];

export const DEMO_CATALOGUE: readonly DemoBook[] = [
  {
    isbn: '978-0-14-143951-8',
    title: 'Pride and Prejudice',
    authors: ['Jane Austen'],
    category: 'Classics',
    publisher: 'Penguin Classics',
    description: 'Elizabeth Bennet and Mr Darcy misjudge each other across the drawing rooms of Regency England.',
    price: 9.99,
    language: 'en',
    publishedDate: '2003-04-29',
    stock: 42,
  },
  {
    isbn: '978-0-14-144114-6',
    title: 'Jane Eyre',
    authors: ['Charlotte Brontë'],
    category: 'Classics',
    publisher: 'Penguin Classics',
    description: 'An orphaned governess, a brooding employer and a secret in the attic of Thornfield Hall.',
    price: 10.99,
    language: 'en',
    publishedDate: '2006-04-25',
    stock: 25,
  },
  {
    isbn: '978-0-14-243724-7',
    title: 'Moby-Dick',
    authors: ['Herman Melville'],
    category: 'Classics',
    publisher: 'Penguin Classics',
    description: 'Captain Ahab pursues the white whale that took his leg.',
    price: 14.99,
    language: 'en',
    publishedDate: '2003-02-01',
    stock: 12,
  },
  {
    isbn: '978-0-14-143947-1',
    title: 'Frankenstein',
    authors: ['Mary Shelley'],
    category: 'Gothic Fiction',
    publisher: 'Penguin Classics',
    description: 'Victor Frankenstein gives life to a creature and then abandons it.',
    price: 8.99,
    language: 'en',
    publishedDate: '2003-05-01',
    stock: 30,
  },
  {
    isbn: '978-0-14-143956-3',
    title: 'Great Expectations',
    authors: ['Charles Dickens'],
    category: 'Classics',
    publisher: 'Penguin Classics',
    description: 'Pip, an orphan blacksmith’s boy, comes into a fortune from an unknown benefactor.',
    price: 11.5,
    language: 'en',
    publishedDate: '2002-12-31',
    stock: 18,
  },
  {
    isbn: '978-0-14-143955-6',
    title: 'Wuthering Heights',
    authors: ['Emily Brontë'],
    category: 'Gothic Fiction',
    publisher: 'Penguin Classics',
    description: 'The passion of Catherine and Heathcliff haunts two families on the Yorkshire moors.',
    price: 9.5,
    language: 'en',
    publishedDate: '2002-12-31',
    stock: 20,
  },
  {
    isbn: '978-0-14-143984-6',
    title: 'Dracula',
    authors: ['Bram Stoker'],
    category: 'Gothic Fiction',
    publisher: 'Penguin Classics',
    description: 'Letters and diaries tell of a Transylvanian count who comes to England.',
    price: 12.99,
    language: 'en',
    publishedDate: '2003-02-25',
    stock: 15,
  },
  {
    isbn: '978-0-14-143957-0',
    title: 'The Picture of Dorian Gray',
    authors: ['Oscar Wilde'],
    category: 'Gothic Fiction',
    publisher: 'Penguin Classics',
    description: 'A portrait ages and decays while its sitter stays young.',
    price: 7.99,
    language: 'en',
    publishedDate: '2003-02-04',
    stock: 27,
  },
  {
    isbn: '978-0-14-044913-6',
    title: 'Crime and Punishment',
    authors: ['Fyodor Dostoevsky'],
    category: 'Classics',
    publisher: 'Penguin Classics',
    description: 'A student in St Petersburg commits a murder and cannot escape his conscience.',
    price: 13.99,
    language: 'en',
    publishedDate: '2003-01-30',
    stock: 10,
  },
  {
    isbn: '978-0-451-52493-5',
    title: 'Nineteen Eighty-Four',
    authors: ['George Orwell'],
    category: 'Dystopian Fiction',
    publisher: 'Signet Classics',
    description: 'Winston Smith rewrites history for the Party and begins to doubt it.',
    price: 9.99,
    language: 'en',
    publishedDate: '1961-01-01',
    stock: 50,
  },
  {
    isbn: '978-0-7432-7356-5',
    title: 'The Great Gatsby',
    authors: ['F. Scott Fitzgerald'],
    category: 'Classics',
    publisher: 'Scribner',
    description: 'Jay Gatsby throws lavish parties on Long Island in the hope of winning back Daisy Buchanan.',
    price: 15.0,
    language: 'en',
    publishedDate: '2004-09-30',
    stock: 33,
  },
  {
    isbn: '978-0-06-085398-3',
    title: 'Good Omens',
    authors: ['Terry Pratchett', 'Neil Gaiman'],
    category: 'Fantasy',
    publisher: 'HarperCollins',
    description: 'An angel and a demon team up to stop the end of the world, having grown fond of it.',
    price: 16.99,
    language: 'en',
    publishedDate: '2006-11-28',
    stock: 22,
  },
];

/**
 * Fills an empty catalogue with the demo authors, categories, publishers and books, all in one
 * transaction; answers how many books were inserted (0 when there were books already). The books
 * go through the same validation and writes as a create request.
 */
export async function seedDemoCatalogue(service: BookService): Promise<number> {
  return service.seedIfEmpty(async (manager: EntityManager, insert) => {
    const authorIds = new Map<string, string>();
    for (const author of DEMO_AUTHORS) {
      const id = randomUUID();
      const name = `${author.firstName} ${author.lastName}`;
      authorIds.set(name, id);
      await manager.insert(Author, { id, ...author, biography: null, nameKey: name.toLowerCase() });
    }
    const categoryIds = new Map<string, string>();
    for (const category of DEMO_CATEGORIES) {
      const id = randomUUID();
      categoryIds.set(category.name, id);
      await manager.insert(Category, { id, ...category, nameKey: category.name.toLowerCase() });
    }
    const publisherIds = new Map<string, string>();
    for (const publisher of DEMO_PUBLISHERS) {
      const id = randomUUID();
      publisherIds.set(publisher.name, id);
      await manager.insert(Publisher, { id, ...publisher, nameKey: publisher.name.toLowerCase() });
    }
    for (const { authors, category, publisher, ...book } of DEMO_CATALOGUE) {
      const request = await parseBookRequest({
        ...book,
        authorIds: authors.map((name) => authorIds.get(name)),
        categoryId: categoryIds.get(category),
        publisherId: publisherIds.get(publisher),
      });
      await insert(manager, request);
    }
    return DEMO_CATALOGUE.length;
  });
}
