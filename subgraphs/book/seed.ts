/**
 * The demo catalogue the embedded default starts with: a dozen classics with their real ISBN-13s,
 * inserted only into an empty catalogue, so a restart or a second instance adds nothing.
 */
import { parseBookRequest, type BookRequestDto } from './dto';
import type { BookService } from './service';

export const DEMO_CATALOGUE: readonly BookRequestDto[] = [
  {
    isbn: '978-0-14-143951-8',
    title: 'Pride and Prejudice',
    authors: ['Jane Austen'],
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
    description: 'An angel and a demon team up to stop the end of the world, having grown fond of it.',
    price: 16.99,
    language: 'en',
    publishedDate: '2006-11-28',
    stock: 22,
  },
];

/**
 * Fills an empty catalogue with the demo books; answers how many were inserted (0 when there
 * were books already). The entries go through the same validation as a create request.
 */
export async function seedDemoCatalogue(service: BookService): Promise<number> {
  const requests = await Promise.all(DEMO_CATALOGUE.map((book) => parseBookRequest({ ...book })));
  return service.seedIfEmpty(requests);
}
