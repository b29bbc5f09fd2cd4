/** POST /api/books/create: the book answered and read back, its validation, ISBN forms and prices. */
import { randomUUID } from 'node:crypto';
import { BOOK_FIELDS, bookService, tag } from '../../test/book-service';
import { expectEnvelope, TIMESTAMP } from '../../test/harness';

const catalogue = bookService();
const { books, newBook, createBook, createAuthor, uniqueIsbn } = catalogue;

describe('POST /api/books/create', () => {
  it('answers 201 with the book, normalized, in the contract field order, and it reads back the same', async () => {
    const res = await books()
      .post('/api/books/create')
      .set('Authorization', catalogue.adminBearer)
      .send({
        isbn: '978-0-14-144114-6',
        title: '  Jane Eyre ',
        description: 'A governess at Thornfield Hall.',
        price: 19.99,
        language: 'EN',
        publishedDate: '2003-04-29',
        publisherId: catalogue.refs.publisherId,
        categoryId: catalogue.refs.categoryId.toUpperCase(),
        authorIds: [catalogue.refs.authorId],
        stock: 7,
      });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(BOOK_FIELDS);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      isbn: '9780141441146',
      title: 'Jane Eyre',
      description: 'A governess at Thornfield Hall.',
      price: 19.99,
      language: 'en',
      publishedDate: '2003-04-29',
      coverImageUrl: null,
      publisherId: catalogue.refs.publisherId,
      categoryId: catalogue.refs.categoryId,
      authorIds: [catalogue.refs.authorId],
      stock: 7,
      heldStock: 0,
      availableStock: 7,
      createdAt: expect.stringMatching(TIMESTAMP),
      updatedAt: res.body.createdAt,
    });
    expect(res.text).toContain('"price":19.99,');

    const read = await books().get(`/api/books/${res.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it('writes a missing description as null and keeps an empty one', async () => {
    const { description: _omitted, ...withoutDescription } = newBook();
    const missing = await books().post('/api/books/create').set('Authorization', catalogue.adminBearer).send(withoutDescription);
    expect(missing.status).toBe(201);
    expect(missing.body.description).toBeNull();
    expect(missing.text).toContain('"description":null');
    const empty = await books()
      .post('/api/books/create')
      .set('Authorization', catalogue.adminBearer)
      .send(newBook({ description: '' }));
    expect(empty.status).toBe(201);
    expect(empty.body.description).toBe('');
  });

  it('keeps several authors in the order given', async () => {
    const [pratchett, gaiman] = [await createAuthor('Terry', `Pratchett ${tag()}`), await createAuthor('Neil', `Gaiman ${tag()}`)];
    const book = await createBook({ authorIds: [gaiman, pratchett] });
    expect((await books().get(`/api/books/${book.id}`)).body.authorIds).toEqual([gaiman, pratchett]);
  });

  it('writes a book without stock as untracked (null), and publishedDate as optional', async () => {
    const { stock: _stock, publishedDate: _date, ...body } = newBook();
    const res = await books().post('/api/books/create').set('Authorization', catalogue.adminBearer).send(body);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ stock: null, publishedDate: null });
    expect(res.text).toContain('"stock":null');
  });

  it('accepts a language name as the shop clients send it', async () => {
    const res = await books()
      .post('/api/books/create')
      .set('Authorization', catalogue.adminBearer)
      .send(newBook({ language: 'English' }));
    expect(res.status).toBe(201);
    expect(res.body.language).toBe('English');
  });

  it.each([
    ['categoryId', 'Category not found'],
    ['publisherId', 'Publisher not found'],
  ])('answers 404 for an unknown %s', async (field, message) => {
    expectEnvelope(
      await books()
        .post('/api/books/create')
        .set('Authorization', catalogue.adminBearer)
        .send(newBook({ [field]: randomUUID() })),
      404,
      message,
    );
  });

  it('answers 404 when one of the authors is unknown, and checks the category first', async () => {
    const unknownAuthor = newBook({ authorIds: [catalogue.refs.authorId, randomUUID()] });
    expectEnvelope(await books().post('/api/books/create').set('Authorization', catalogue.adminBearer).send(unknownAuthor), 404, 'One or more authors not found');
    const everythingUnknown = newBook({ authorIds: [randomUUID()], categoryId: randomUUID(), publisherId: randomUUID() });
    expectEnvelope(await books().post('/api/books/create').set('Authorization', catalogue.adminBearer).send(everythingUnknown), 404, 'Category not found');
  });

  it('answers 409 for an ISBN that exists, however it is written', async () => {
    const isbn = uniqueIsbn();
    await createBook({ isbn });
    const spaced = `${isbn.slice(0, 3)}-${isbn.slice(3, 6)} ${isbn.slice(6)}`;
    const res = await books()
      .post('/api/books/create')
      .set('Authorization', catalogue.adminBearer)
      .send(newBook({ isbn: spaced }));
    expectEnvelope(res, 409, 'A book with this ISBN already exists.');
  });

  it('creates exactly one book from 10 parallel creates with one ISBN', async () => {
    const body = newBook();
    const results = await Promise.all(Array.from({ length: 10 }, () => books().post('/api/books/create').set('Authorization', catalogue.adminBearer).send(body)));
    const statuses = results.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(9);
    expect((await books().get('/api/books').query({ q: body.isbn })).body).toHaveLength(1);
  });

  it('treats an ISBN-10 and its ISBN-13 as the same book', async () => {
    await createBook({ isbn: '0-8044-2957-X' });
    const res = await books()
      .post('/api/books/create')
      .set('Authorization', catalogue.adminBearer)
      .send(newBook({ isbn: '978-0-8044-2957-3' }));
    expectEnvelope(res, 409, 'A book with this ISBN already exists.');
  });

  it('answers 400 listing every failing field, authors by index', async () => {
    const res = await books()
      .post('/api/books/create')
      .set('Authorization', catalogue.adminBearer)
      .send({
        isbn: '978-0-14-143951-9',
        title: '  ',
        description: 'fine',
        price: 19.999,
        language: 'e1',
        publishedDate: '2023-02-29',
        publisherId: 'acme',
        authorIds: [catalogue.refs.authorId, ' ', 7],
        stock: -1,
      });
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual([
      'isbn: has an invalid check digit',
      'title: Title is required',
      'price: must have at most 2 decimals',
      'language: must be an ISO 639-1 code such as en or a language name such as English',
      'publishedDate: must be a real date in yyyy-MM-dd form',
      'publisherId: must be a UUID',
      'categoryId: Category is required',
      'authorIds[1]: must be a UUID',
      'authorIds[2]: must be a UUID',
      'stock: must be an integer from 0 to 2147483647',
    ]);
  });

  it('answers 400 naming every required field of an empty object', async () => {
    const res = await books().post('/api/books/create').set('Authorization', catalogue.adminBearer).send({});
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual([
      'isbn: ISBN is required',
      'title: Title is required',
      'price: Price is required',
      'language: Language is required',
      'publisherId: Publisher is required',
      'categoryId: Category is required',
      'authorIds: At least one author is required',
    ]);
  });

  it.each([
    [{ authorIds: [] }, 'authorIds: At least one author is required'],
    [{ authorIds: 'Jane Austen' }, 'authorIds: must be an array of author ids'],
    [{ authorIds: Array.from({ length: 21 }, () => randomUUID()) }, 'authorIds: must contain no more than 20 elements'],
    [{ authorIds: ['5a6b7c8d-9e0f-4112-8233-4455667788aa', '5A6B7C8D-9E0F-4112-8233-4455667788AA'] }, 'authorIds: must not list an author twice'],
    [{ title: 'x'.repeat(256) }, 'title: must be shorter than or equal to 255 characters'],
    [{ title: 'Line\nbreak' }, 'title: must not contain control characters'],
    [{ description: 'x'.repeat(5_001) }, 'description: must be shorter than or equal to 5000 characters'],
    [{ isbn: '' }, 'isbn: ISBN is required'],
    [{ price: 0 }, 'price: Price must be positive'],
    [{ price: -5 }, 'price: Price must be positive'],
    [{ price: '19.99' }, 'price: must be a number'],
    [{ price: null }, 'price: Price is required'],
    [{ price: 1e-7 }, 'price: must have at most 2 decimals'],
    [{ price: 100_000_000 }, 'price: must not be greater than 99999999.99'],
    [{ language: ' ' }, 'language: Language is required'],
    [{ publisherId: '' }, 'publisherId: Publisher is required'],
    [{ stock: 1.5 }, 'stock: must be an integer from 0 to 2147483647'],
    [{ stock: 2_147_483_648 }, 'stock: must be an integer from 0 to 2147483647'],
    [{ language: 'xx' }, 'language: must be an ISO 639-1 code such as en or a language name such as English'],
    [{ publishedDate: '2020-1-5' }, 'publishedDate: must be a real date in yyyy-MM-dd form'],
  ])('answers 400 for %j', async (overrides, line) => {
    const res = await books().post('/api/books/create').set('Authorization', catalogue.adminBearer).send(newBook(overrides));
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toContain(line);
  });

  it('answers 400 for malformed JSON and for a body that is not an object', async () => {
    const malformed = await books().post('/api/books/create').set('Authorization', catalogue.adminBearer).set('Content-Type', 'application/json').send('{"isbn":');
    expectEnvelope(malformed, 400);
    expectEnvelope(await books().post('/api/books/create').set('Authorization', catalogue.adminBearer).send([newBook()]), 400);
  });

  it('answers 401 without a token or with a bad one, and 403 for a USER', async () => {
    expectEnvelope(await books().post('/api/books/create').send(newBook()), 401, 'Authentication is required to access this resource');
    expectEnvelope(await books().post('/api/books/create').set('Authorization', 'Bearer not.a.jwt').send(newBook()), 401);
    expectEnvelope(await books().post('/api/books/create').set('Authorization', catalogue.userBearer).send(newBook()), 403);
    // A USER learns nothing about validation either.
    expectEnvelope(await books().post('/api/books/create').set('Authorization', catalogue.userBearer).send({}), 403);
  });
});

describe('ISBN validation', () => {
  it.each([
    ['9780141439518', '9780141439518'],
    ['978 0 14 143951 8', '9780141439518'],
    ['979-10-90636-07-1', '9791090636071'],
    ['0-14-143951-3', '0141439513'],
    ['3-16-148410-X', '316148410X'],
    ['316148410x', '316148410X'],
  ])('accepts %s, stored as %s', async (isbn, stored) => {
    const res = await books().post('/api/books/create').set('Authorization', catalogue.adminBearer).send(newBook({ isbn }));
    expect(res.status).toBe(201);
    expect(res.body.isbn).toBe(stored);
    // Several cases are the same book: free the ISBN for the next one.
    expect((await books().delete(`/api/books/${res.body.id}`).set('Authorization', catalogue.adminBearer)).status).toBe(200);
  });

  it.each([
    ['9780141439519', 'isbn: has an invalid check digit'],
    ['0141439514', 'isbn: has an invalid check digit'],
    ['316148410', 'isbn: must be an ISBN-10 or ISBN-13 (digits, with optional hyphens or spaces)'],
    ['1234567890128', 'isbn: must be an ISBN-10 or ISBN-13 (digits, with optional hyphens or spaces)'],
    ['X161484100', 'isbn: must be an ISBN-10 or ISBN-13 (digits, with optional hyphens or spaces)'],
    ['ISBN 9780141439518', 'isbn: must be an ISBN-10 or ISBN-13 (digits, with optional hyphens or spaces)'],
  ])('refuses %s', async (isbn, line) => {
    const res = await books().post('/api/books/create').set('Authorization', catalogue.adminBearer).send(newBook({ isbn }));
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual([line]);
  });

  it('refuses an ISBN that is not a string', async () => {
    const res = await books()
      .post('/api/books/create')
      .set('Authorization', catalogue.adminBearer)
      .send(newBook({ isbn: 9780141439518 }));
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual(['isbn: must be a string']);
  });
});

describe('prices', () => {
  it.each([19.99, 0.1, 0.2, 0.3, 4.35, 1.15, 0.07, 1.1, 0.01, 99999999.99])('keeps %p exact through create, storage and read', async (price) => {
    const created = await createBook({ price });
    expect(created.price).toBe(price);
    // The column holds the decimal itself ("4.35" on MySQL, 4.35 on SQLite), not 4.34 or 4.3499999.
    const [row] = await catalogue.stack.services.book!.db.dataSource.query('SELECT CAST(price AS CHAR) AS text FROM books WHERE id = ?', [created.id]);
    expect(Number(row.text)).toBe(price);
    const read = await books().get(`/api/books/${created.id}`);
    expect(read.text).toContain(`"price":${price},`);
    expect((await books().post('/api/books/batch').send([created.id])).body[0].price).toBe(price);
  });

  it('accepts a price written with trailing zeros as the same amount', async () => {
    const res = await books()
      .post('/api/books/create')
      .set('Authorization', catalogue.adminBearer)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(newBook()).replace('"price":12.99', '"price":12.50'));
    expect(res.status).toBe(201);
    expect(res.text).toContain('"price":12.5,');
  });
});
