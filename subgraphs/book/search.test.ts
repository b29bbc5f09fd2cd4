/** The full-text search: GET /api/books/search and GraphQL searchBooks, on SQLite FTS5 or MariaDB FULLTEXT. */
import request from 'supertest';
import { BOOK_FIELDS, bookService, tag } from '../../test/book-service';
import { expectEnvelope } from '../../test/harness';
import { graphql } from '../../test/graphql';

const catalogue = bookService();
const { books, createBook, createAuthor } = catalogue;

const search = (q: string, page: { limit?: number; offset?: number } = {}) =>
  books()
    .get('/api/books/search')
    .query({ q, ...page });
const ids = async (q: string) => {
  const res = await search(q);
  expect(res.status).toBe(200);
  return res.body.map((b: { id: string }) => b.id) as string[];
};
/** `word` with its fourth letter replaced: one edit away, and no longer its prefix. */
const typo = (word: string) => `${word.slice(0, 3)}${word[3] === 'q' ? 'w' : 'q'}${word.slice(4)}`;

describe('GET /api/books/search', () => {
  it('answers 400 in the error envelope when q is missing or blank', async () => {
    for (const query of [{}, { q: '' }, { q: '   ' }]) {
      const res = await books().get('/api/books/search').query(query);
      expectEnvelope(res, 400, 'Validation failed for one or more fields');
      expect(res.body.validationErrors).toEqual(['q: must not be blank']);
    }
    const paging = await search('x', { limit: 0 });
    expectEnvelope(paging, 400);
    expect(paging.body.validationErrors).toEqual(['limit: must be an integer between 1 and 100']);
  });

  it('ranks a title match above an author match above a description match, each with its highlights', async () => {
    const t = tag();
    const inDescription = await createBook({ title: 'Quiet Rooms', description: `A long story in which ${t} appears once.` });
    const byAuthor = await createBook({ title: 'Loud Rooms', authorIds: [await createAuthor('Ada', t)] });
    const inTitle = await createBook({ title: `The ${t} Affair`, description: 'Nothing to see.' });
    const res = await search(t);
    expect(res.status).toBe(200);
    expect(res.headers['x-total-count']).toBe('3');
    expect(res.body.map((b: { id: string }) => b.id)).toEqual([inTitle.id, byAuthor.id, inDescription.id]);
    expect(Object.keys(res.body[0])).toEqual([...BOOK_FIELDS, 'highlights']);
    expect(res.body.map((b: { highlights: unknown }) => b.highlights)).toEqual([
      { title: `The <mark>${t}</mark> Affair` },
      { authors: `Ada <mark>${t}</mark>` },
      { description: `A long story in which <mark>${t}</mark> appears once.` },
    ]);
  });

  it('matches a word by its beginning and marks the whole word', async () => {
    const t = tag();
    const book = await createBook({ title: `The ${t}hobbit` });
    const res = await search(`${t}hob`);
    expect(res.body.map((b: { id: string }) => b.id)).toEqual([book.id]);
    expect(res.body[0].highlights).toEqual({ title: `The <mark>${t}hobbit</mark>` });
  });

  it('needs every word, in any order, across title, authors, category and publisher', async () => {
    const [a, b] = [tag(), tag()];
    const book = await createBook({ title: `Rings of ${a}`, authorIds: [await createAuthor('Ronald', b)] });
    await createBook({ title: `Rings of ${a} again` });
    expect(await ids(`${b} ${a}`)).toEqual([book.id]);
    expect(await ids(`${a} ${b}`)).toEqual([book.id]);
    expect(await ids(`${a} ${tag()}`)).toEqual([]);
  });

  it('finds "The Picture of Dorian Gray" by every word of its title, "of" included, on either database', async () => {
    const t = tag();
    const book = await createBook({ title: `The Picture of Dorian Gray ${t}`, description: 'A portrait ages; its sitter does not.' });
    const other = await createBook({ title: `Dorian Days ${t}`, description: 'Nothing of the sort.' });
    expect(await ids(`The Picture of Dorian Gray ${t}`)).toEqual([book.id]);
    expect((await ids(`of ${t}`)).sort()).toEqual([book.id, other.id].sort());
    expect(await ids(`picture OF ${t}`)).toEqual([book.id]);
    // A word of two letters is a prefix like any other: "do" begins "Dorian".
    expect((await ids(`do ${t}`)).sort()).toEqual([book.id, other.id].sort());
    expect(await ids(`gr ${t}`)).toEqual([book.id]);
    const res = await search(`The Picture of Dorian Gray ${t}`);
    expect(res.body[0].highlights.title).toBe(`<mark>The</mark> <mark>Picture</mark> <mark>of</mark> <mark>Dorian</mark> <mark>Gray</mark> <mark>${t}</mark>`);
  });

  it('finds a title of one two-letter word by that word', async () => {
    const t = tag();
    const book = await createBook({ title: 'It', description: `A clown in ${t}.` });
    expect(await ids(`it ${t}`)).toEqual([book.id]);
  });

  it('finds a book despite one typo in a word of five letters or more, not in a shorter word', async () => {
    const t = tag();
    const book = await createBook({ title: `Dracula and Emma ${t}` });
    expect(await ids(`dracla ${t}`)).toEqual([book.id]);
    expect(await ids(typo(t))).toEqual([book.id]);
    const corrected = await search(`${t} draculla`);
    expect(corrected.body[0].highlights).toEqual({ title: `<mark>Dracula</mark> and Emma <mark>${t}</mark>` });
    expect(await ids(`emna ${t}`)).toEqual([]);
    // Two typos in one word are too many.
    expect(await ids(typo(typo(t).replace(/.$/, 'z')))).toEqual([]);
  });

  it('finds a book by its ISBN written with hyphens, and by the first digits', async () => {
    const book = await createBook();
    const { isbn } = book;
    expect(await ids(`${isbn.slice(0, 3)}-${isbn.slice(3, 9)}-${isbn.slice(9)}`)).toEqual([book.id]);
    const res = await search(isbn.slice(0, 12));
    expect(res.body.map((b: { id: string }) => b.id)).toContain(book.id);
    expect(res.body.find((b: { id: string }) => b.id === book.id).highlights).toEqual({ isbn: `<mark>${isbn}</mark>` });
  });

  it('pages with limit and offset, X-Total-Count always the number of matches', async () => {
    const t = tag();
    const created = [];
    for (let i = 0; i < 5; i += 1) created.push((await createBook({ title: `${t} volume ${i}` })).id);
    const seen: string[] = [];
    for (const offset of [0, 2, 4]) {
      const res = await search(t, { limit: 2, offset });
      expect(res.status).toBe(200);
      expect(res.headers['x-total-count']).toBe('5');
      seen.push(...res.body.map((b: { id: string }) => b.id));
    }
    expect(seen.sort()).toEqual([...created].sort());
    const beyond = await search(t, { offset: 5 });
    expect(beyond.body).toEqual([]);
    expect(beyond.headers['x-total-count']).toBe('5');
  });

  it('follows a book update and a delete', async () => {
    const [before, after] = [tag(), tag()];
    const book = await createBook({ title: `Draft ${before}` });
    const update = await books()
      .put(`/api/books/update/${book.id}`)
      .set('Authorization', catalogue.adminBearer)
      .send(catalogue.newBook({ isbn: book.isbn, title: `Final ${after}` }));
    expect(update.status).toBe(200);
    expect(await ids(before)).toEqual([]);
    expect(await ids(after)).toEqual([book.id]);
    const removed = await books().delete(`/api/books/${book.id}`).set('Authorization', catalogue.adminBearer);
    expect(removed.status).toBe(200);
    expect(await ids(after)).toEqual([]);
  });

  it('follows an author rename and a category rename', async () => {
    const [old, renamed, category] = [tag(), tag(), tag()];
    const authorId = await createAuthor('Ann', old);
    const book = await createBook({ title: 'Renamed Things', authorIds: [authorId] });
    const rename = await books().put(`/api/authors/update/${authorId}`).set('Authorization', catalogue.adminBearer).send({ firstName: 'Ann', lastName: renamed });
    expect(rename.status).toBe(200);
    expect(await ids(old)).toEqual([]);
    const res = await search(renamed);
    expect(res.body.map((b: { id: string }) => b.id)).toEqual([book.id]);
    expect(res.body[0].highlights).toEqual({ authors: `Ann <mark>${renamed}</mark>` });

    const shelf = await books()
      .post('/api/categories/create')
      .set('Authorization', catalogue.adminBearer)
      .send({ name: `Shelf ${old}` });
    const shelved = await createBook({ title: 'Shelved Things', authorIds: [authorId], categoryId: shelf.body.id });
    expect(await ids(`${old} ${renamed}`)).toEqual([shelved.id]);
    const renameCategory = await books()
      .put(`/api/categories/update/${shelf.body.id}`)
      .set('Authorization', catalogue.adminBearer)
      .send({ name: `Shelf ${category}` });
    expect(renameCategory.status).toBe(200);
    expect(await ids(old)).toEqual([]);
    expect(await ids(`${category} ${renamed}`)).toEqual([shelved.id]);
  });

  it('escapes the text around the marks', async () => {
    const t = tag();
    await createBook({ title: `<b>${t}</b> & co` });
    const res = await search(t);
    expect(res.body[0].highlights.title).toBe(`&#60;b&#62;<mark>${t}</mark>&#60;/b&#62; &#38; co`);
  });

  it('leaves the list filter q as it was: a substring of title, author or ISBN', async () => {
    const t = tag();
    const book = await createBook({ title: `Pre${t}post` });
    const list = await books()
      .get('/api/books/')
      .query({ q: t.slice(2) });
    expect(list.body.map((b: { id: string }) => b.id)).toEqual([book.id]);
  });
});

describe('GraphQL searchBooks', () => {
  it('answers the same books as REST with the total and highlights per field, and BAD_USER_INPUT for a blank q', async () => {
    const t = tag();
    const book = await createBook({ title: `Night ${t}`, description: `The ${t} returns.` });
    const res = await graphql(
      catalogue.stack.urls.book,
      'query ($q: String!) { searchBooks(q: $q, limit: 5) { total hits { book { id title authors { id } } highlights { field fragment } } } }',
      {
        variables: { q: t },
      },
    );
    expect(res.body).toEqual({
      data: {
        searchBooks: {
          total: 1,
          hits: [
            {
              book: { id: book.id, title: `Night ${t}`, authors: [{ id: catalogue.refs.authorId }] },
              highlights: [
                { field: 'title', fragment: `Night <mark>${t}</mark>` },
                { field: 'description', fragment: `The <mark>${t}</mark> returns.` },
              ],
            },
          ],
        },
      },
    });
    const blank = await graphql(catalogue.stack.urls.book, '{ searchBooks(q: " ") { total } }');
    expect(blank.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', validationErrors: ['q: must not be blank'] });
  });
});

describe('a long description', () => {
  it('is cut to a fragment around its first match', async () => {
    const t = tag();
    const description = `${'Long before anything happened, '.repeat(10)}the ${t} came. ${'And afterwards nothing much. '.repeat(10)}`;
    await createBook({ title: 'Fragments', description });
    const res = await request(catalogue.stack.urls.book).get('/api/books/search').query({ q: t });
    const fragment: string = res.body[0].highlights.description;
    expect(fragment).toMatch(new RegExp(`^….* <mark>${t}</mark> came\\. .*…$`));
    expect(fragment.length).toBeLessThan(200);
  });
});
