/** Reading the catalogue: GET /api/books/{id}, the list with its search, filters and pages, and POST /api/books/batch. */
import { randomUUID } from 'node:crypto';
import { BOOK_FIELDS, bookService, tag } from '../../test/book-service';
import { expectEnvelope } from '../../test/harness';

const catalogue = bookService();
const { books, createBook, createAuthor, uniqueIsbn } = catalogue;

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
      expect(Object.keys(res.body[0])).toEqual(BOOK_FIELDS);
    }
  });

  it('matches title, author and ISBN case-insensitively, sorted by title', async () => {
    const t = tag();
    const byTitle = await createBook({ title: `Zebra ${t.toUpperCase()} Stories` });
    const byAuthor = await createBook({ title: 'Apples', authorIds: [catalogue.refs.authorId, await createAuthor('Mary', t)] });
    const isbn = uniqueIsbn();
    const byIsbn = await createBook({ isbn, title: `Mango ${t}` });
    const res = await books().get('/api/books').query({ q: t });
    expect(res.status).toBe(200);
    expect(res.body.map((b: { id: string }) => b.id)).toEqual([byAuthor.id, byIsbn.id, byTitle.id]);

    const found = await books()
      .get('/api/books')
      .query({ q: `${isbn.slice(0, 3)}-${isbn.slice(3, 9)}-${isbn.slice(9)}` });
    expect(found.body.map((b: { id: string }) => b.id)).toEqual([byIsbn.id]);
  });

  it('finds a book entered by its ISBN-10 when searched by its ISBN-13', async () => {
    const book = await createBook({ isbn: '0-19-853453-1' });
    const res = await books().get('/api/books').query({ q: '9780198534532' });
    expect(res.body.map((b: { id: string }) => b.id)).toEqual([book.id]);
  });

  it('matches non-ASCII letters case-insensitively', async () => {
    const t = tag();
    const book = await createBook({ title: `Émile ${t}` });
    const res = await books()
      .get('/api/books')
      .query({ q: `émile ${t}` });
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
    await createBook({ title: `Alpha ${t}`, authorIds: [await createAuthor('Beta', `Writer ${t}`)] });
    expect(
      (
        await books()
          .get('/api/books')
          .query({ q: `${t} beta` })
      ).body,
    ).toEqual([]);
  });

  it('answers every match without a limit, pages with limit and offset, in title then id order, X-Total-Count always', async () => {
    const t = tag();
    const created = [];
    for (let i = 0; i < 22; i += 1) created.push(await createBook({ title: `Paging ${t} ${String(i).padStart(2, '0')}` }));
    const all = await books().get('/api/books').query({ q: t });
    expect(all.body.map((b: { id: string }) => b.id)).toEqual(created.map((b) => b.id));
    expect(all.headers['x-total-count']).toBe('22');
    const page = await books().get('/api/books').query({ q: t, limit: 3, offset: 19 });
    expect(page.body.map((b: { title: string }) => b.title)).toEqual([`Paging ${t} 19`, `Paging ${t} 20`, `Paging ${t} 21`]);
    expect(page.headers['x-total-count']).toBe('22');
    const rest = await books().get('/api/books').query({ q: t, offset: 20 });
    expect(rest.body.map((b: { title: string }) => b.title)).toEqual([`Paging ${t} 20`, `Paging ${t} 21`]);
    const past = await books().get('/api/books').query({ q: t, offset: 22 });
    expect(past.body).toEqual([]);
    expect(past.headers['x-total-count']).toBe('22');
  });

  it('filters by category, publisher and author, alone and together', async () => {
    const t = tag();
    const create = (path: string, body: Record<string, unknown>) => books().post(path).set('Authorization', catalogue.adminBearer).send(body);
    const category = (await create('/api/categories/create', { name: `Poetry ${t}` })).body.id as string;
    const publisher = (await create('/api/publishers/create', { name: `Faber ${t}` })).body.id as string;
    const poet = await createAuthor('Ted', `Hughes ${t}`);
    const both = await createBook({ title: `Crow ${t}`, categoryId: category, publisherId: publisher, authorIds: [catalogue.refs.authorId, poet] });
    const categoryOnly = await createBook({ title: `Birthday Letters ${t}`, categoryId: category });
    const ids = async (query: Record<string, string>) => {
      const res = await books().get('/api/books').query(query);
      expect(res.headers['x-total-count']).toBe(String(res.body.length));
      return res.body.map((b: { id: string }) => b.id);
    };
    expect(await ids({ categoryId: category })).toEqual([categoryOnly.id, both.id]);
    expect(await ids({ publisherId: publisher })).toEqual([both.id]);
    expect(await ids({ authorId: poet })).toEqual([both.id]);
    expect(await ids({ categoryId: category, q: 'birthday' })).toEqual([categoryOnly.id]);
    expect(await ids({ categoryId: category, publisherId: catalogue.refs.publisherId })).toEqual([categoryOnly.id]);
    expect(await ids({ authorId: randomUUID() })).toEqual([]);
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
    ['categoryId=fiction', 'categoryId: must be a UUID'],
    ['publisherId=1', 'publisherId: must be a UUID'],
    ['authorId=', 'authorId: must be a UUID'],
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
    const res = await books().post('/api/books/batch').send([c.id, randomUUID(), a.id, c.id.toUpperCase(), b.id, a.id]);
    expect(res.status).toBe(200);
    expect(res.body.map((book: { id: string }) => book.id)).toEqual([c.id, a.id, b.id]);
    expect(res.body[0]).toEqual((await books().get(`/api/books/${c.id}`)).body);
  });

  it('answers an empty array for no ids or only unknown ones', async () => {
    expect((await books().post('/api/books/batch').send([])).body).toEqual([]);
    expect((await books().post('/api/books/batch').send([randomUUID()])).body).toEqual([]);
  });

  it('takes 100 ids and refuses 101', async () => {
    const ok = await books()
      .post('/api/books/batch')
      .send(Array.from({ length: 100 }, () => randomUUID()));
    expect(ok.status).toBe(200);
    const tooMany = await books()
      .post('/api/books/batch')
      .send(Array.from({ length: 101 }, () => randomUUID()));
    expectEnvelope(tooMany, 400);
    expect(tooMany.body.validationErrors).toEqual(['ids: must contain at most 100 ids']);
  });

  it('answers 400 for a body that is not an array of UUIDs', async () => {
    const notArray = await books()
      .post('/api/books/batch')
      .send({ ids: [randomUUID()] });
    expectEnvelope(notArray, 400);
    expect(notArray.body.validationErrors).toEqual(['ids: must be a JSON array of book ids']);
    const badItems = await books().post('/api/books/batch').send([randomUUID(), 'nope', 42]);
    expectEnvelope(badItems, 400);
    expect(badItems.body.validationErrors).toEqual(['ids[1]: must be a UUID', 'ids[2]: must be a UUID']);
    expectEnvelope(await books().post('/api/books/batch'), 400);
  });
});
