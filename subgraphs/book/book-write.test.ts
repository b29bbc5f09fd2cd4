/** Changing the catalogue: PUT /api/books/update/{id}, DELETE /api/books/{id}, and the methods a path does not serve. */
import { randomUUID } from 'node:crypto';
import { BOOK_FIELDS, bookService, tag } from '../../test/book-service';
import { expectEnvelope, TIMESTAMP } from '../../test/harness';

const catalogue = bookService();
const { books, newBook, createBook, createAuthor, uniqueIsbn } = catalogue;

describe('PUT /api/books/update/{id}', () => {
  it('replaces every field and keeps id and createdAt', async () => {
    const book = await createBook({ price: 10.0 });
    const coAuthor = await createAuthor('Co', `Author ${tag()}`);
    const isbn = uniqueIsbn();
    const res = await books()
      .put(`/api/books/update/${book.id}`)
      .set('Authorization', catalogue.adminBearer)
      .send({
        isbn,
        title: 'Second Edition',
        price: 0.3,
        language: 'fr',
        publishedDate: '2021-06-30',
        publisherId: catalogue.refs.publisherId,
        categoryId: catalogue.refs.categoryId,
        authorIds: [coAuthor, catalogue.refs.authorId],
        stock: 0,
      });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(BOOK_FIELDS);
    expect(res.body).toEqual({
      id: book.id,
      isbn,
      title: 'Second Edition',
      description: null,
      price: 0.3,
      language: 'fr',
      publishedDate: '2021-06-30',
      coverImageUrl: null,
      publisherId: catalogue.refs.publisherId,
      categoryId: catalogue.refs.categoryId,
      authorIds: [coAuthor, catalogue.refs.authorId],
      stock: 0,
      heldStock: 0,
      availableStock: 0,
      createdAt: book.createdAt,
      updatedAt: expect.stringMatching(TIMESTAMP),
    });
    expect(res.body.updatedAt >= book.updatedAt).toBe(true);
    expect((await books().get(`/api/books/${book.id}`)).body).toEqual(res.body);
  });

  it('lets a book keep its own ISBN, written differently', async () => {
    const book = await createBook();
    const res = await books()
      .put(`/api/books/update/${book.id}`)
      .set('Authorization', catalogue.adminBearer)
      .send(newBook({ isbn: `${book.isbn.slice(0, 3)}-${book.isbn.slice(3)}`, stock: 99 }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ isbn: book.isbn, stock: 99 });
  });

  it('keeps the stock when the body has none, and stops tracking it on null', async () => {
    const book = await createBook({ stock: 7 });
    const { stock: _stock, ...withoutStock } = newBook({ isbn: book.isbn });
    const kept = await books().put(`/api/books/update/${book.id}`).set('Authorization', catalogue.adminBearer).send(withoutStock);
    expect(kept.status).toBe(200);
    expect(kept.body.stock).toBe(7);
    const untracked = await books()
      .put(`/api/books/update/${book.id}`)
      .set('Authorization', catalogue.adminBearer)
      .send({ ...withoutStock, stock: null });
    expect(untracked.body.stock).toBeNull();
  });

  it('answers 409 when another book has the ISBN', async () => {
    const first = await createBook();
    const second = await createBook();
    const res = await books()
      .put(`/api/books/update/${second.id}`)
      .set('Authorization', catalogue.adminBearer)
      .send(newBook({ isbn: first.isbn }));
    expectEnvelope(res, 409, 'A book with this ISBN already exists.');
    expect((await books().get(`/api/books/${second.id}`)).body.isbn).toBe(second.isbn);
  });

  it('answers 404 for an unknown id, 400 for a bad id or body', async () => {
    const id = randomUUID();
    expectEnvelope(await books().put(`/api/books/update/${id}`).set('Authorization', catalogue.adminBearer).send(newBook()), 404, `Book not found: ${id}`);
    expectEnvelope(await books().put('/api/books/update/123').set('Authorization', catalogue.adminBearer).send(newBook()), 400);
    const book = await createBook();
    const invalid = await books()
      .put(`/api/books/update/${book.id}`)
      .set('Authorization', catalogue.adminBearer)
      .send(newBook({ authorIds: [catalogue.refs.authorId, ''] }));
    expectEnvelope(invalid, 400);
    expect(invalid.body.validationErrors).toEqual(['authorIds[1]: must be a UUID']);
  });

  it('answers 401 anonymously and 403 for a USER, changing nothing', async () => {
    const book = await createBook();
    expectEnvelope(await books().put(`/api/books/update/${book.id}`).send(newBook()), 401);
    expectEnvelope(await books().put(`/api/books/update/${book.id}`).set('Authorization', catalogue.userBearer).send(newBook()), 403);
    expect((await books().get(`/api/books/${book.id}`)).body.isbn).toBe(book.isbn);
  });
});

describe('DELETE /api/books/{id}', () => {
  it('answers 200 text/plain, and the book is gone', async () => {
    const book = await createBook();
    const res = await books().delete(`/api/books/${book.id}`).set('Authorization', catalogue.adminBearer);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('Deleted SuccessFully');
    expectEnvelope(await books().get(`/api/books/${book.id}`), 404, `Book not found: ${book.id}`);
    expectEnvelope(await books().delete(`/api/books/${book.id}`).set('Authorization', catalogue.adminBearer), 404, `Book not found: ${book.id}`);
  });

  it('frees the ISBN for a new book', async () => {
    const book = await createBook();
    await books().delete(`/api/books/${book.id}`).set('Authorization', catalogue.adminBearer);
    expect(
      (
        await books()
          .post('/api/books/create')
          .set('Authorization', catalogue.adminBearer)
          .send(newBook({ isbn: book.isbn }))
      ).status,
    ).toBe(201);
  });

  it('answers 401 anonymously, 403 for a USER, 400 for a bad id', async () => {
    const book = await createBook();
    expectEnvelope(await books().delete(`/api/books/${book.id}`), 401);
    expectEnvelope(await books().delete(`/api/books/${book.id}`).set('Authorization', catalogue.userBearer), 403);
    expectEnvelope(await books().delete('/api/books/xyz').set('Authorization', catalogue.adminBearer), 400);
    expect((await books().get(`/api/books/${book.id}`)).status).toBe(200);
  });
});

describe('methods a path does not serve', () => {
  it.each([
    ['patch', '/api/books/{id}', 'GET, DELETE, HEAD'],
    ['put', '/api/books/{id}', 'GET, DELETE, HEAD'],
    ['post', '/api/books', 'GET, HEAD'],
    ['delete', '/api/books/', 'GET, HEAD'],
    ['get', '/api/books/create', 'POST'],
    ['get', '/api/books/batch', 'POST'],
    ['post', '/api/books/update/{id}', 'PUT'],
  ] as const)('answers 405 to %s %s', async (method, path, allow) => {
    const res = await books()[method](path.replace('{id}', randomUUID()));
    expectEnvelope(res, 405);
    expect(res.headers.allow).toBe(allow);
  });

  it('answers 404 for an unknown path under /api/books', async () => {
    expectEnvelope(await books().get(`/api/books/${randomUUID()}/reviews`), 404);
  });
});
