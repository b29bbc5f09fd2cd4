/**
 * What the book service's own test files share: the service alone with an admin's and a user's
 * bearer and the references test books point at, started around the calling file, and makers of
 * valid books and authors.
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { catalogueReferences } from './commerce';
import { StackSuite, stackSuite } from './harness';
import { registeredUser } from './stack';

/** Set once the file's tests run. Its makers are arrow functions, so a test file may take them out of it. */
export class BookService extends StackSuite {
  userBearer!: string;
  refs!: { authorId: string; categoryId: string; publisherId: string };
  private isbnCounter = 0;

  get adminBearer(): string {
    return this.admin.bearer;
  }

  readonly books = () => request(this.stack.urls.book);

  /** A valid ISBN-13 no other test of the file uses, its check digit computed here independently of the service. */
  readonly uniqueIsbn = (): string => {
    this.isbnCounter += 1;
    const first12 = `979${String(this.isbnCounter).padStart(9, '0')}`;
    const sum = [...first12].reduce((total, digit, i) => total + Number(digit) * (i % 2 === 0 ? 1 : 3), 0);
    return `${first12}${(10 - (sum % 10)) % 10}`;
  };

  /** A create body that passes every rule. */
  readonly newBook = (overrides: Record<string, unknown> = {}) => ({
    isbn: this.uniqueIsbn(),
    title: 'A Test Book',
    description: 'A book written for tests.',
    price: 12.99,
    language: 'en',
    publishedDate: '2020-01-15',
    publisherId: this.refs.publisherId,
    categoryId: this.refs.categoryId,
    authorIds: [this.refs.authorId],
    stock: 5,
    ...overrides,
  });

  readonly createBook = async (overrides: Record<string, unknown> = {}) => {
    const res = await this.books().post('/api/books/create').set('Authorization', this.adminBearer).send(this.newBook(overrides));
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; isbn: string; title: string; price: number; createdAt: string; updatedAt: string };
  };

  /** An author of the catalogue, for tests that need their own. */
  readonly createAuthor = async (firstName: string, lastName?: string): Promise<string> => {
    const res = await this.books().post('/api/authors/create').set('Authorization', this.adminBearer).send({ firstName, lastName });
    if (res.status !== 201) throw new Error(`author failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  };
}

/** Starts the book service before the calling file's tests and stops it after them. */
export function bookService(): BookService {
  return stackSuite(new BookService(), { services: ['book'] }, async (service) => {
    service.userBearer = (await registeredUser(service.stack)).bearer;
    service.refs = await catalogueReferences(service.stack, service.adminBearer);
  });
}

/** A tag no other test uses, for names a search must find alone. */
export const tag = () => `t${randomBytes(4).toString('hex')}`;

/** The contract's field order of a book. */
export const BOOK_FIELDS = [
  'id',
  'isbn',
  'title',
  'description',
  'price',
  'language',
  'publishedDate',
  'coverImageUrl',
  'publisherId',
  'categoryId',
  'authorIds',
  'stock',
  'heldStock',
  'availableStock',
  'createdAt',
  'updatedAt',
];
