import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { catalogueReferences, createBook } from '../../test/commerce';
import { StackSuite, stackSuite } from '../../test/harness';
import { errorCodes, graphql } from '../../test/graphql';
import type { BookServiceRuntime } from './index';

const suite = stackSuite(new StackSuite(), { services: ['book'] });

const books = () => (suite.stack.services.book as BookServiceRuntime).books;
const gql = (query: string, variables?: Record<string, unknown>) => graphql(suite.stack.urls.book, query, { variables });

describe('the book subgraph', () => {
  it('resolves Book references through one batched read; a missing book is null without an error', async () => {
    const [a, b] = [await createBook(suite.stack, suite.admin.bearer, 'Middlemarch', 19.99), await createBook(suite.stack, suite.admin.bearer, 'Bleak House', 59.98)];
    const missing = randomUUID();
    const batch = jest.spyOn(books(), 'getBooks');
    try {
      const res = await gql('query ($r: [_Any!]!) { _entities(representations: $r) { ... on Book { id title price } } }', {
        r: [
          { __typename: 'Book', id: b.id },
          { __typename: 'Book', id: missing },
          { __typename: 'Book', id: a.id.toUpperCase() },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: {
          _entities: [{ id: b.id, title: 'Bleak House', price: '59.98' }, null, { id: a.id, title: 'Middlemarch', price: '19.99' }],
        },
      });
      expect(batch).toHaveBeenCalledTimes(1);
      expect(batch.mock.calls[0][0]).toEqual([b.id, missing, a.id]);
    } finally {
      batch.mockRestore();
    }
  });

  it('lists and finds books publicly, as REST does, with money as a decimal string and authors, category and publisher as types', async () => {
    const title = `Searchable ${randomUUID().slice(0, 8)}`;
    const book = await createBook(suite.stack, suite.admin.bearer, title, 5, 100);
    const refs = await catalogueReferences(suite.stack, suite.admin.bearer);
    const rest = await request(suite.stack.urls.book).get('/api/books/').query({ q: title });
    const res = await gql('query ($q: String) { books(q: $q, limit: 5) { id title authors { id firstName } category { id } publisher { id } price stock coverImageUrl } }', {
      q: title,
    });
    expect(res.body).toEqual({
      data: {
        books: [
          {
            id: book.id,
            title,
            authors: [{ id: refs.authorId, firstName: 'Test' }],
            category: { id: refs.categoryId },
            publisher: { id: refs.publisherId },
            price: '5.00',
            stock: 100,
            coverImageUrl: null,
          },
        ],
      },
    });
    expect(rest.body.map((b: { id: string }) => b.id)).toEqual([book.id]);

    const one = await gql('query ($id: ID!) { book(id: $id) { isbn language publishedDate createdAt } }', { id: book.id });
    expect(one.body.data.book).toEqual({ isbn: expect.stringMatching(/^978\d{10}$/), language: 'en', publishedDate: '2001-01-01', createdAt: expect.any(String) });
  });

  it('filters books by category and lists authors, categories and publishers as REST does', async () => {
    const refs = await catalogueReferences(suite.stack, suite.admin.bearer);
    const untracked = await createBook(suite.stack, suite.admin.bearer, `Untracked ${randomUUID().slice(0, 8)}`, 3);
    const byCategory = await gql('query ($c: ID) { books(categoryId: $c, limit: 100) { id stock } }', { c: refs.categoryId });
    expect(byCategory.body.data.books).toContainEqual({ id: untracked.id, stock: null });
    const lists = await gql('{ authors { id firstName lastName biography country } categories { id name description } publishers { id name address } }');
    for (const [field, path] of [
      ['authors', '/api/authors/'],
      ['categories', '/api/categories/'],
      ['publishers', '/api/publishers/'],
    ] as const) {
      expect(lists.body.data[field]).toEqual((await request(suite.stack.urls.book).get(path)).body);
    }
  });

  it('answers bad paging and ids with BAD_USER_INPUT and the REST messages, an unknown id with NOT_FOUND', async () => {
    const paging = await gql('{ books(limit: 0, offset: -1) { id } }');
    expect(paging.body.errors[0].extensions).toEqual({
      code: 'BAD_USER_INPUT',
      reason: 'VALIDATION_FAILED',
      validationErrors: ['limit: must be an integer between 1 and 100', 'offset: must be an integer between 0 and 2147483647'],
    });
    const badId = await gql('{ book(id: "42") { id } }');
    expect(errorCodes(badId.body)).toEqual(['BAD_USER_INPUT']);
    const unknown = randomUUID();
    const missing = await gql('query ($id: ID!) { book(id: $id) { id } }', { id: unknown });
    expect(missing.body).toEqual({
      data: { book: null },
      errors: [expect.objectContaining({ message: `Book not found: ${unknown}`, extensions: { code: 'NOT_FOUND', reason: 'BOOK_NOT_FOUND' } })],
    });
  });
});
