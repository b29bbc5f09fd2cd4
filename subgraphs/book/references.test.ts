import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { catalogueReferences, nextIsbn13 } from '../../test/commerce';
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

const api = () => request(stack.urls.book);
const tag = () => randomBytes(4).toString('hex');

interface Resource {
  path: string;
  label: string;
  /** A valid body with a unique name. */
  body(): Record<string, unknown>;
  fields: string[];
  /** The body with the name changed to `name`. */
  renamed(body: Record<string, unknown>, name: string): Record<string, unknown>;
  required: [Record<string, unknown>, string];
  /** The field of a book that points at it. */
  bookField: 'authorIds' | 'categoryId' | 'publisherId';
}

const RESOURCES: Resource[] = [
  {
    path: '/api/authors',
    label: 'Author',
    body: () => ({ firstName: 'Ursula', lastName: `Le Guin ${tag()}`, biography: 'Wrote Earthsea.', country: 'United States' }),
    fields: ['id', 'firstName', 'lastName', 'biography', 'country'],
    renamed: (body, name) => ({ ...body, lastName: name }),
    required: [{ lastName: 'Only' }, 'firstName: First name is required'],
    bookField: 'authorIds',
  },
  {
    path: '/api/categories',
    label: 'Category',
    body: () => ({ name: `Science Fiction ${tag()}`, description: 'Futures and elsewheres.' }),
    fields: ['id', 'name', 'description'],
    renamed: (body, name) => ({ ...body, name }),
    required: [{ description: 'no name' }, 'name: Category name is required'],
    bookField: 'categoryId',
  },
  {
    path: '/api/publishers',
    label: 'Publisher',
    body: () => ({ name: `Gollancz ${tag()}`, address: 'Carmelite House, London' }),
    fields: ['id', 'name', 'address'],
    renamed: (body, name) => ({ ...body, name }),
    required: [{ address: 'no name' }, 'name: Publisher name is required'],
    bookField: 'publisherId',
  },
];

async function create(resource: Resource, body = resource.body()) {
  const res = await api().post(`${resource.path}/create`).set('Authorization', adminBearer).send(body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown> & { id: string };
}

/** A book pointing at `id` through `field`, the rest from the shared test references. */
async function bookPointingAt(field: Resource['bookField'], id: string) {
  const refs = await catalogueReferences(stack, adminBearer);
  const body = {
    isbn: nextIsbn13(),
    title: 'Uses it',
    price: 5,
    language: 'en',
    publisherId: refs.publisherId,
    categoryId: refs.categoryId,
    authorIds: [refs.authorId],
    [field]: field === 'authorIds' ? [id] : id,
  };
  const res = await api().post('/api/books/create').set('Authorization', adminBearer).send(body);
  if (res.status !== 201) throw new Error(`book failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string };
}

describe.each(RESOURCES)('$path', (resource) => {
  it('creates (201) in the contract field order, and reads it back by id and in the list', async () => {
    const body = resource.body();
    const res = await api().post(`${resource.path}/create`).set('Authorization', adminBearer).send(body);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(resource.fields);
    expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), ...body });
    expect((await api().get(`${resource.path}/${res.body.id}`)).body).toEqual(res.body);
    for (const path of [`${resource.path}/`, resource.path]) {
      const list = await api().get(path);
      expect(list.status).toBe(200);
      expect(list.body).toContainEqual(res.body);
    }
  });

  it('writes optional fields left out as null', async () => {
    const [body] = resource.required;
    const minimal = Object.fromEntries(Object.entries(resource.body()).filter(([key]) => !(key in body) || key === 'lastName'));
    const res = await api().post(`${resource.path}/create`).set('Authorization', adminBearer).send(minimal);
    expect(res.status).toBe(201);
    for (const field of resource.fields) if (!(field in minimal) && field !== 'id') expect(res.body[field]).toBeNull();
  });

  it('updates and actually saves (200), and 404 for an unknown id', async () => {
    const created = await create(resource);
    const name = `Renamed ${tag()}`;
    const res = await api().put(`${resource.path}/update/${created.id}`).set('Authorization', adminBearer).send(resource.renamed(resource.body(), name));
    expect(res.status).toBe(200);
    expect((await api().get(`${resource.path}/${created.id}`)).body).toEqual(res.body);
    expect(Object.values(res.body)).toContain(name);
    const unknown = randomUUID();
    expectEnvelope(await api().put(`${resource.path}/update/${unknown}`).set('Authorization', adminBearer).send(resource.body()), 404, `${resource.label} not found: ${unknown}`);
  });

  it('answers 409 for a name another one has, whatever its letter case', async () => {
    const body = resource.body();
    await create(resource, body);
    const shouted = Object.fromEntries(Object.entries(body).map(([key, value]) => [key, typeof value === 'string' ? value.toUpperCase() : value]));
    expectEnvelope(await api().post(`${resource.path}/create`).set('Authorization', adminBearer).send(shouted), 409);
    const other = await create(resource);
    expectEnvelope(await api().put(`${resource.path}/update/${other.id}`).set('Authorization', adminBearer).send(body), 409);
  });

  it('answers 400 with the reference message when the name is missing', async () => {
    const [body, line] = resource.required;
    const res = await api().post(`${resource.path}/create`).set('Authorization', adminBearer).send(body);
    expectEnvelope(res, 400, 'Validation failed for one or more fields');
    expect(res.body.validationErrors).toEqual([line]);
  });

  it('answers 404 for an unknown id and 400 for one that is not a UUID', async () => {
    const id = randomUUID();
    expectEnvelope(await api().get(`${resource.path}/${id}`), 404, `${resource.label} not found: ${id}`);
    expectEnvelope(await api().get(`${resource.path}/nope`), 400);
  });

  it('deletes (200 text/plain Success) one no book uses; then it is gone', async () => {
    const created = await create(resource);
    const res = await api().delete(`${resource.path}/${created.id}`).set('Authorization', adminBearer);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('Success');
    expectEnvelope(await api().get(`${resource.path}/${created.id}`), 404);
    expectEnvelope(await api().delete(`${resource.path}/${created.id}`).set('Authorization', adminBearer), 404);
  });

  it('answers 409 and deletes nothing while a book uses it, and deletes it once the book is gone', async () => {
    const created = await create(resource);
    const book = await bookPointingAt(resource.bookField, created.id);
    expectEnvelope(await api().delete(`${resource.path}/${created.id}`).set('Authorization', adminBearer), 409, `${resource.label} is still used by 1 book(s)`);
    expect((await api().get(`${resource.path}/${created.id}`)).status).toBe(200);
    const read = await api().get(`/api/books/${book.id}`);
    expect(read.body[resource.bookField]).toEqual(resource.bookField === 'authorIds' ? [created.id] : created.id);
    await api().delete(`/api/books/${book.id}`).set('Authorization', adminBearer);
    expect((await api().delete(`${resource.path}/${created.id}`).set('Authorization', adminBearer)).status).toBe(200);
  });

  it('answers 401 anonymously and 403 for a USER on every write, changing nothing', async () => {
    const created = await create(resource);
    expectEnvelope(await api().post(`${resource.path}/create`).send(resource.body()), 401);
    expectEnvelope(await api().post(`${resource.path}/create`).set('Authorization', userBearer).send(resource.body()), 403);
    expectEnvelope(await api().put(`${resource.path}/update/${created.id}`).set('Authorization', userBearer).send(resource.body()), 403);
    expectEnvelope(await api().delete(`${resource.path}/${created.id}`), 401);
    expectEnvelope(await api().delete(`${resource.path}/${created.id}`).set('Authorization', userBearer), 403);
    expect((await api().get(`${resource.path}/${created.id}`)).body).toEqual(created);
  });

  it('answers 405 with Allow to a method a path does not serve', async () => {
    const res = await api().post(`${resource.path}/`);
    expectEnvelope(res, 405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });
});

describe('the authors list', () => {
  it('is sorted by last name, then first name', async () => {
    const surname = `Zz${tag()}`;
    const second = await create(RESOURCES[0], { firstName: 'Bea', lastName: surname });
    const first = await create(RESOURCES[0], { firstName: 'Abe', lastName: surname });
    const ids = ((await api().get('/api/authors/')).body as { id: string }[]).map((a) => a.id);
    expect(ids.indexOf(first.id)).toBeLessThan(ids.indexOf(second.id));
  });
});
