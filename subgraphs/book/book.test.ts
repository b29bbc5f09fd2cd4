import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { adminSession, expectEnvelope, registeredUser, startStack, type Stack } from '../../test/harness';

let stack: Stack;
let adminBearer: string;
let userBearer: string;
beforeAll(async () => {
  stack = await startStack({ services: ['book'] });
  adminBearer = (await adminSession(stack)).bearer;
  userBearer = (await registeredUser(stack)).bearer;
});
afterAll(async () => {
  await stack?.stop();
});

const books = () => request(stack.urls.book);

/** A valid ISBN-13 no other test uses, its check digit computed here independently of the service. */
let isbnCounter = 0;
function uniqueIsbn(): string {
  isbnCounter += 1;
  const first12 = `979${String(isbnCounter).padStart(9, '0')}`;
  const sum = [...first12].reduce((total, digit, i) => total + Number(digit) * (i % 2 === 0 ? 1 : 3), 0);
  return `${first12}${(10 - (sum % 10)) % 10}`;
}

function newBook(overrides: Record<string, unknown> = {}) {
  return {
    isbn: uniqueIsbn(),
    title: 'A Test Book',
    authors: ['Ada Writer'],
    description: 'A book written for tests.',
    price: 12.99,
    language: 'en',
    publishedDate: '2020-01-15',
    stock: 5,
    ...overrides,
  };
}

async function createBook(overrides: Record<string, unknown> = {}) {
  const res = await books().post('/api/books/create').set('Authorization', adminBearer).send(newBook(overrides));
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; isbn: string; title: string; price: number; createdAt: string; updatedAt: string };
}

const tag = () => `t${randomBytes(4).toString('hex')}`;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/;
const FIELDS = ['id', 'isbn', 'title', 'authors', 'description', 'price', 'language', 'publishedDate', 'stock', 'createdAt', 'updatedAt'];

describe('POST /api/books/create', () => {
  it('answers 201 with the book, normalized, in the contract field order, and it reads back the same', async () => {
    const res = await books()
      .post('/api/books/create')
      .set('Authorization', adminBearer)
      .send({
        isbn: '978-0-14-144114-6',
        title: '  Jane Eyre ',
        authors: ['Charlotte Brontë '],
        description: 'A governess at Thornfield Hall.',
        price: 19.99,
        language: 'EN',
        publishedDate: '2003-04-29',
        stock: 7,
      });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(FIELDS);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      isbn: '9780141441146',
      title: 'Jane Eyre',
      authors: ['Charlotte Brontë'],
      description: 'A governess at Thornfield Hall.',
      price: 19.99,
      language: 'en',
      publishedDate: '2003-04-29',
      stock: 7,
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
    const missing = await books().post('/api/books/create').set('Authorization', adminBearer).send(withoutDescription);
    expect(missing.status).toBe(201);
    expect(missing.body.description).toBeNull();
    expect(missing.text).toContain('"description":null');
    const empty = await books().post('/api/books/create').set('Authorization', adminBearer).send(newBook({ description: '' }));
    expect(empty.status).toBe(201);
    expect(empty.body.description).toBe('');
  });

  it('keeps several authors in the order given', async () => {
    const book = await createBook({ authors: ['Terry Pratchett', 'Neil Gaiman'] });
    expect((await books().get(`/api/books/${book.id}`)).body.authors).toEqual(['Terry Pratchett', 'Neil Gaiman']);
  });

  it('answers 409 for an ISBN that exists, however it is written', async () => {
    const isbn = uniqueIsbn();
    await createBook({ isbn });
    const spaced = `${isbn.slice(0, 3)}-${isbn.slice(3, 6)} ${isbn.slice(6)}`;
    const res = await books().post('/api/books/create').set('Authorization', adminBearer).send(newBook({ isbn: spaced }));
    expectEnvelope(res, 409, `A book with ISBN ${isbn} already exists`);
  });

  it('creates exactly one book from 10 parallel creates with one ISBN', async () => {
    const body = newBook();
    const results = await Promise.all(Array.from({ length: 10 }, () => books().post('/api/books/create').set('Authorization', adminBearer).send(body)));
    const statuses = results.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(9);
    expect((await books().get('/api/books').query({ q: body.isbn })).body).toHaveLength(1);
  });

  it('treats an ISBN-10 and its ISBN-13 as the same book', async () => {
    await createBook({ isbn: '0-8044-2957-X' });
    const res = await books().post('/api/books/create').set('Authorization', adminBearer).send(newBook({ isbn: '978-0-8044-2957-3' }));
    expectEnvelope(res, 409, 'A book with ISBN 9780804429573 already exists');
  });

  it('answers 400 listing every failing field, authors by index', async () => {
    const res = await books()
      .post('/api/books/create')
      .set('Authorization', adminBearer)
      .send({
        isbn: '978-0-14-143951-9',
        title: '  ',
        authors: ['Jane Austen', ' ', 7],
        description: 'fine',
        price: 19.999,
        language: 'english',
        publishedDate: '2023-02-29',
        stock: -1,
      });
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual([
      'isbn: has an invalid check digit',
      'title: must not be blank',
      'authors[1]: must not be blank',
      'authors[2]: must be a string',
      'price: must have at most 2 decimals',
      'language: must be an ISO 639-1 language code such as en',
      'publishedDate: must be a real date in yyyy-MM-dd form',
      'stock: must not be less than 0',
    ]);
  });

  it('answers 400 naming every required field of an empty object', async () => {
    const res = await books().post('/api/books/create').set('Authorization', adminBearer).send({});
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    const fields = new Set((res.body.validationErrors as string[]).map((line) => line.split(':')[0]));
    expect(fields).toEqual(new Set(['isbn', 'title', 'authors', 'price', 'language', 'publishedDate', 'stock']));
  });

  it.each([
    [{ authors: [] }, 'authors: should not be empty'],
    [{ authors: 'Jane Austen' }, 'authors: must be an array'],
    [{ authors: Array.from({ length: 21 }, (_, i) => `Author ${i}`) }, 'authors: must contain no more than 20 elements'],
    [{ authors: ['x'.repeat(256)] }, 'authors[0]: must be shorter than or equal to 255 characters'],
    [{ authors: ['Line\nbreak'] }, 'authors[0]: must not contain control characters'],
    [{ title: 'x'.repeat(256) }, 'title: must be shorter than or equal to 255 characters'],
    [{ description: 'x'.repeat(10_001) }, 'description: must be shorter than or equal to 10000 characters'],
    [{ price: 0 }, 'price: must be greater than 0'],
    [{ price: -5 }, 'price: must be greater than 0'],
    [{ price: '19.99' }, 'price: must be a number'],
    [{ price: null }, 'price: must be a number'],
    [{ price: 1e-7 }, 'price: must have at most 2 decimals'],
    [{ price: 100_000_000 }, 'price: must not be greater than 99999999.99'],
    [{ stock: 1.5 }, 'stock: must be an integer number'],
    [{ stock: 2_147_483_648 }, 'stock: must not be greater than 2147483647'],
    [{ language: 'xx' }, 'language: must be an ISO 639-1 language code such as en'],
    [{ publishedDate: '2020-1-5' }, 'publishedDate: must be a real date in yyyy-MM-dd form'],
  ])('answers 400 for %j', async (overrides, line) => {
    const res = await books().post('/api/books/create').set('Authorization', adminBearer).send(newBook(overrides));
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toContain(line);
  });

  it('answers 400 for malformed JSON and for a body that is not an object', async () => {
    const malformed = await books().post('/api/books/create').set('Authorization', adminBearer).set('Content-Type', 'application/json').send('{"isbn":');
    expectEnvelope(malformed, 400);
    expectEnvelope(await books().post('/api/books/create').set('Authorization', adminBearer).send([newBook()]), 400);
  });

  it('answers 401 without a token or with a bad one, and 403 for a USER', async () => {
    expectEnvelope(await books().post('/api/books/create').send(newBook()), 401, 'Authentication is required to access this resource');
    expectEnvelope(await books().post('/api/books/create').set('Authorization', 'Bearer not.a.jwt').send(newBook()), 401);
    expectEnvelope(await books().post('/api/books/create').set('Authorization', userBearer).send(newBook()), 403);
    // A USER learns nothing about validation either.
    expectEnvelope(await books().post('/api/books/create').set('Authorization', userBearer).send({}), 403);
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
    const res = await books().post('/api/books/create').set('Authorization', adminBearer).send(newBook({ isbn }));
    expect(res.status).toBe(201);
    expect(res.body.isbn).toBe(stored);
    // Several cases are the same book: free the ISBN for the next one.
    expect((await books().delete(`/api/books/${res.body.id}`).set('Authorization', adminBearer)).status).toBe(200);
  });

  it.each([
    ['9780141439519', 'isbn: has an invalid check digit'],
    ['0141439514', 'isbn: has an invalid check digit'],
    ['316148410', 'isbn: must be an ISBN-10 or ISBN-13 (digits, with optional hyphens or spaces)'],
    ['1234567890128', 'isbn: must be an ISBN-10 or ISBN-13 (digits, with optional hyphens or spaces)'],
    ['X161484100', 'isbn: must be an ISBN-10 or ISBN-13 (digits, with optional hyphens or spaces)'],
    ['ISBN 9780141439518', 'isbn: must be an ISBN-10 or ISBN-13 (digits, with optional hyphens or spaces)'],
  ])('refuses %s', async (isbn, line) => {
    const res = await books().post('/api/books/create').set('Authorization', adminBearer).send(newBook({ isbn }));
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual([line]);
  });

  it('refuses an ISBN that is not a string', async () => {
    const res = await books().post('/api/books/create').set('Authorization', adminBearer).send(newBook({ isbn: 9780141439518 }));
    expectEnvelope(res, 400);
    expect(res.body.validationErrors).toEqual(['isbn: must be a string']);
  });
});

describe('prices', () => {
  it.each([19.99, 0.1, 0.2, 0.3, 4.35, 1.15, 0.07, 1.1, 0.01, 99999999.99])('keeps %p exact through create, storage and read', async (price) => {
    const created = await createBook({ price });
    expect(created.price).toBe(price);
    // The column holds the decimal itself ("4.35" on MySQL, 4.35 on SQLite), not 4.34 or 4.3499999.
    const [row] = await stack.services.book!.db.dataSource.query('SELECT CAST(price AS CHAR) AS text FROM books WHERE id = ?', [created.id]);
    expect(Number(row.text)).toBe(price);
    const read = await books().get(`/api/books/${created.id}`);
    expect(read.text).toContain(`"price":${price},`);
    expect((await books().post('/api/books/batch').send([created.id])).body[0].price).toBe(price);
  });

  it('accepts a price written with trailing zeros as the same amount', async () => {
    const res = await books()
      .post('/api/books/create')
      .set('Authorization', adminBearer)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(newBook()).replace('"price":12.99', '"price":12.50'));
    expect(res.status).toBe(201);
    expect(res.text).toContain('"price":12.5,');
  });
});

describe('GET /api/books/{id}', () => {
  it('answers 404 for an unknown id and 400 for one that is not a UUID', async () => {
    const id = randomUUID();
    expectEnvelope(await books().get(`/api/books/${id}`), 404, `Book not found: ${id}`);
    const bad = await books().get('/api/books/not-a-uuid');
    expectEnvelope(bad, 400);
    expect(bad.body.validationErrors).toEqual(['id: must be a UUID']);
  });

  it('finds a book by its id in upper case too', async () => {
    const book = await createBook();
    const res = await books().get(`/api/books/${book.id.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(book.id);
  });
});

describe('GET /api/books', () => {
  it('answers with and without the trailing slash, anonymously, as a JSON array', async () => {
    await createBook();
    for (const path of ['/api/books', '/api/books/']) {
      const res = await books().get(path);
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body.length).toBeGreaterThan(0);
      expect(Object.keys(res.body[0])).toEqual(FIELDS);
    }
  });

  it('matches title, author and ISBN case-insensitively, sorted by title', async () => {
    const t = tag();
    const byTitle = await createBook({ title: `Zebra ${t.toUpperCase()} Stories` });
    const byAuthor = await createBook({ title: 'Apples', authors: ['Someone', `Mary ${t}`] });
    const isbn = uniqueIsbn();
    const byIsbn = await createBook({ isbn, title: `Mango ${t}` });
    const res = await books().get('/api/books').query({ q: t });
    expect(res.status).toBe(200);
    expect(res.body.map((b: { id: string }) => b.id)).toEqual([byAuthor.id, byIsbn.id, byTitle.id]);

    const found = await books().get('/api/books').query({ q: `${isbn.slice(0, 3)}-${isbn.slice(3, 9)}-${isbn.slice(9)}` });
    expect(found.body.map((b: { id: string }) => b.id)).toEqual([byIsbn.id]);
  });

  it('finds a book entered by its ISBN-10 when searched by its ISBN-13', async () => {
    const book = await createBook({ isbn: '0-19-853453-1' });
    const res = await books().get('/api/books').query({ q: '9780198534532' });
    expect(res.body.map((b: { id: string }) => b.id)).toEqual([book.id]);
  });

  it('matches non-ASCII letters case-insensitively', async () => {
    const t = tag();
    const book = await createBook({ title: `Émile ${t}`, authors: ['Jean-Jacques Rousseau'] });
    const res = await books().get('/api/books').query({ q: `émile ${t}` });
    expect(res.body.map((b: { id: string }) => b.id)).toEqual([book.id]);
  });

  it('treats % and _ as plain characters', async () => {
    const t = tag();
    const percent = await createBook({ title: `100% ${t}` });
    const underscore = await createBook({ title: `snake_case ${t}` });
    await createBook({ title: `1000 ${t}` });
    await createBook({ title: `snakeXcase ${t}` });
    const ids = async (q: string) => (await books().get('/api/books').query({ q })).body.map((b: { id: string }) => b.id);
    expect(await ids(`% ${t}`)).toEqual([percent.id]);
    expect(await ids(`e_case ${t}`)).toEqual([underscore.id]);
    // The escape character is plain too: "100!%" is not read as "100%".
    expect(await ids(`100!% ${t}`)).toEqual([]);
  });

  it('does not match across the title and an author', async () => {
    const t = tag();
    await createBook({ title: `Alpha ${t}`, authors: ['Beta Writer'] });
    expect((await books().get('/api/books').query({ q: `${t} beta` })).body).toEqual([]);
  });

  it('pages with limit and offset, 20 by default, in title then id order', async () => {
    const t = tag();
    const created = [];
    for (let i = 0; i < 22; i += 1) created.push(await createBook({ title: `Paging ${t} ${String(i).padStart(2, '0')}` }));
    const all = (await books().get('/api/books').query({ q: t })).body;
    expect(all.map((b: { id: string }) => b.id)).toEqual(created.slice(0, 20).map((b) => b.id));
    const page = await books().get('/api/books').query({ q: t, limit: 3, offset: 19 });
    expect(page.body.map((b: { title: string }) => b.title)).toEqual([`Paging ${t} 19`, `Paging ${t} 20`, `Paging ${t} 21`]);
    expect((await books().get('/api/books').query({ q: t, offset: 22 })).body).toEqual([]);
    expect((await books().get('/api/books').query({ q: t, limit: 100 })).body).toHaveLength(22);
  });

  it('orders books with the same title by id', async () => {
    const t = tag();
    const a = await createBook({ title: `Twin ${t}` });
    const b = await createBook({ title: `Twin ${t}` });
    const res = await books().get('/api/books').query({ q: t });
    expect(res.body.map((book: { id: string }) => book.id)).toEqual([a.id, b.id].sort());
  });

  it('treats a blank q as no filter', async () => {
    const res = await books().get('/api/books').query({ q: '   ', limit: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
  });

  it.each([
    ['limit=0', 'limit: must be an integer between 1 and 100'],
    ['limit=101', 'limit: must be an integer between 1 and 100'],
    ['limit=abc', 'limit: must be an integer between 1 and 100'],
    ['limit=1.5', 'limit: must be an integer between 1 and 100'],
    ['limit=', 'limit: must be an integer between 1 and 100'],
    ['limit=5&limit=6', 'limit: must be an integer between 1 and 100'],
    ['offset=-1', 'offset: must be an integer between 0 and 2147483647'],
    ['offset=2147483648', 'offset: must be an integer between 0 and 2147483647'],
    ['q=a&q=b', 'q: must be a single string'],
    [`q=${'x'.repeat(201)}`, 'q: must be shorter than or equal to 200 characters'],
    ['q=a%0Ab', 'q: must not contain control characters'],
  ])('answers 400 for ?%s', async (query, line) => {
    const res = await books().get(`/api/books?${query}`);
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual([line]);
  });
});

describe('POST /api/books/batch', () => {
  it('answers the known books in request order, each once, unknown ids left out, anonymously', async () => {
    const [a, b, c] = [await createBook(), await createBook(), await createBook()];
    const res = await books()
      .post('/api/books/batch')
      .send([c.id, randomUUID(), a.id, c.id.toUpperCase(), b.id, a.id]);
    expect(res.status).toBe(200);
    expect(res.body.map((book: { id: string }) => book.id)).toEqual([c.id, a.id, b.id]);
    expect(res.body[0]).toEqual((await books().get(`/api/books/${c.id}`)).body);
  });

  it('answers an empty array for no ids or only unknown ones', async () => {
    expect((await books().post('/api/books/batch').send([])).body).toEqual([]);
    expect((await books().post('/api/books/batch').send([randomUUID()])).body).toEqual([]);
  });

  it('takes 100 ids and refuses 101', async () => {
    const ok = await books().post('/api/books/batch').send(Array.from({ length: 100 }, () => randomUUID()));
    expect(ok.status).toBe(200);
    const tooMany = await books().post('/api/books/batch').send(Array.from({ length: 101 }, () => randomUUID()));
    expectEnvelope(tooMany, 400);
    expect(tooMany.body.validationErrors).toEqual(['ids: must contain at most 100 ids']);
  });

  it('answers 400 for a body that is not an array of UUIDs', async () => {
    const notArray = await books().post('/api/books/batch').send({ ids: [randomUUID()] });
    expectEnvelope(notArray, 400);
    expect(notArray.body.validationErrors).toEqual(['ids: must be a JSON array of book ids']);
    const badItems = await books().post('/api/books/batch').send([randomUUID(), 'nope', 42]);
    expectEnvelope(badItems, 400);
    expect(badItems.body.validationErrors).toEqual(['ids[1]: must be a UUID', 'ids[2]: must be a UUID']);
    expectEnvelope(await books().post('/api/books/batch'), 400);
  });
});

describe('PUT /api/books/update/{id}', () => {
  it('replaces every field and keeps id and createdAt', async () => {
    const book = await createBook({ price: 10.0 });
    const isbn = uniqueIsbn();
    const res = await books()
      .put(`/api/books/update/${book.id}`)
      .set('Authorization', adminBearer)
      .send({ isbn, title: 'Second Edition', authors: ['New Author', 'Co Author'], price: 0.3, language: 'fr', publishedDate: '2021-06-30', stock: 0 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(FIELDS);
    expect(res.body).toEqual({
      id: book.id,
      isbn,
      title: 'Second Edition',
      authors: ['New Author', 'Co Author'],
      description: null,
      price: 0.3,
      language: 'fr',
      publishedDate: '2021-06-30',
      stock: 0,
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
      .set('Authorization', adminBearer)
      .send(newBook({ isbn: `${book.isbn.slice(0, 3)}-${book.isbn.slice(3)}`, stock: 99 }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ isbn: book.isbn, stock: 99 });
  });

  it('answers 409 when another book has the ISBN', async () => {
    const first = await createBook();
    const second = await createBook();
    const res = await books().put(`/api/books/update/${second.id}`).set('Authorization', adminBearer).send(newBook({ isbn: first.isbn }));
    expectEnvelope(res, 409, `A book with ISBN ${first.isbn} already exists`);
    expect((await books().get(`/api/books/${second.id}`)).body.isbn).toBe(second.isbn);
  });

  it('answers 404 for an unknown id, 400 for a bad id or body', async () => {
    const id = randomUUID();
    expectEnvelope(await books().put(`/api/books/update/${id}`).set('Authorization', adminBearer).send(newBook()), 404, `Book not found: ${id}`);
    expectEnvelope(await books().put('/api/books/update/123').set('Authorization', adminBearer).send(newBook()), 400);
    const book = await createBook();
    const invalid = await books().put(`/api/books/update/${book.id}`).set('Authorization', adminBearer).send(newBook({ authors: ['ok', ''] }));
    expectEnvelope(invalid, 400);
    expect(invalid.body.validationErrors).toEqual(['authors[1]: must not be blank']);
  });

  it('answers 401 anonymously and 403 for a USER, changing nothing', async () => {
    const book = await createBook();
    expectEnvelope(await books().put(`/api/books/update/${book.id}`).send(newBook()), 401);
    expectEnvelope(await books().put(`/api/books/update/${book.id}`).set('Authorization', userBearer).send(newBook()), 403);
    expect((await books().get(`/api/books/${book.id}`)).body.isbn).toBe(book.isbn);
  });
});

describe('DELETE /api/books/{id}', () => {
  it('answers 200 text/plain, and the book is gone', async () => {
    const book = await createBook();
    const res = await books().delete(`/api/books/${book.id}`).set('Authorization', adminBearer);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe(`Book with id : ${book.id} Deleted successfully`);
    expectEnvelope(await books().get(`/api/books/${book.id}`), 404, `Book not found: ${book.id}`);
    expectEnvelope(await books().delete(`/api/books/${book.id}`).set('Authorization', adminBearer), 404, `Book not found: ${book.id}`);
  });

  it('frees the ISBN for a new book', async () => {
    const book = await createBook();
    await books().delete(`/api/books/${book.id}`).set('Authorization', adminBearer);
    expect((await books().post('/api/books/create').set('Authorization', adminBearer).send(newBook({ isbn: book.isbn }))).status).toBe(201);
  });

  it('answers 401 anonymously, 403 for a USER, 400 for a bad id', async () => {
    const book = await createBook();
    expectEnvelope(await books().delete(`/api/books/${book.id}`), 401);
    expectEnvelope(await books().delete(`/api/books/${book.id}`).set('Authorization', userBearer), 403);
    expectEnvelope(await books().delete('/api/books/xyz').set('Authorization', adminBearer), 400);
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
