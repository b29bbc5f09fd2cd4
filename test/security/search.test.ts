/**
 * SQL wildcards and injection strings in the two searches (issue 8, item 4): `GET /api/books?q=`
 * and `GET /api/user/search?keyword=`, over REST and GraphQL through the gateway. Each answers 200
 * with exactly the rows that contain the text literally (case-insensitively), computed here from the
 * full lists, and the tables are intact afterwards.
 */
import { createBook } from '../commerce';
import { adminSession, registeredUser } from '../harness';
import { send, startSystem, type Answer, type System } from '../hostile';

let system: System;
let admin: Awaited<ReturnType<typeof adminSession>>;

/** Titles, authors and names carrying the characters LIKE, quoting and escaping treat specially. */
const TRICKY_TEXTS = ['100% Pure', 'Under_score', "O'Reilly", 'Back\\slash', 'Say "Hi"', 'Bang! Escape', 'Fifty %_ Mix', 'semi; colon', 'Dash -- Comment', 'Plain Words'];

const NEEDLES = [
  "' OR 1=1 --",
  "' OR '1'='1",
  '%',
  '_',
  '\\',
  '"; DROP TABLE books; --',
  "'; DROP TABLE user_profiles; --",
  '!',
  '%_',
  '!%',
  '\\%',
  "'",
  '"',
  '[a-z]',
  '*',
  ') OR (1=1',
  "%' --",
  '_nder',
  '% pure',
  'under_',
  '--',
  ';',
];

beforeAll(async () => {
  system = await startSystem();
  admin = await adminSession(system.stack);
  for (const text of TRICKY_TEXTS) {
    await createBook(system.stack, admin.bearer, `The ${text} Book`, 10);
    await registeredUser(system.stack, { firstName: text.slice(0, 50), lastName: `Reader ${text}`.slice(0, 50) });
  }
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

function get(path: string): Promise<Answer> {
  return send(system.url, { method: 'GET', path, headers: { Authorization: admin.bearer } });
}

function gql(query: string, variables: Record<string, unknown>): Promise<Answer> {
  return send(system.url, {
    method: 'POST',
    path: '/graphql',
    headers: { Authorization: admin.bearer, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
}

interface Book {
  id: string;
  title: string;
  authorIds: string[];
}
interface Profile {
  userId: string;
  firstName: string;
  lastName: string;
  email: string;
}

async function allBooks(): Promise<Book[]> {
  const books: Book[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = (await get(`/api/books?limit=100&offset=${offset}`)).json as Book[];
    books.push(...page);
    if (page.length < 100) return books;
  }
}

/** Each author's name as the search reads it: first and last name. */
async function authorNames(): Promise<Map<string, string>> {
  const authors = (await get('/api/authors/')).json as { id: string; firstName: string; lastName: string | null }[];
  return new Map(authors.map((author) => [author.id, [author.firstName, author.lastName].filter(Boolean).join(' ')]));
}

const allProfiles = async () => (await get('/api/user/')).json as Profile[];
const contains = (haystack: string, needle: string) => haystack.toLowerCase().includes(needle.trim().toLowerCase());
const ids = (rows: { id?: string; userId?: string }[]) => rows.map((row) => row.id ?? row.userId).sort();

describe('injection strings and LIKE wildcards as search text', () => {
  it.each(NEEDLES)('books ?q=%s: 200, exactly the books whose title or author contains it', async (needle) => {
    const names = await authorNames();
    const expected = (await allBooks()).filter((book) => contains(book.title, needle) || book.authorIds.some((id) => contains(names.get(id) ?? '', needle)));
    const answer = await get(`/api/books?limit=100&q=${encodeURIComponent(needle)}`);
    expect(answer.status).toBe(200);
    expect(ids(answer.json as Book[])).toEqual(ids(expected));
    const viaGraphql = await gql('query ($q: String) { books(q: $q, limit: 100) { id } }', { q: needle });
    expect(ids((viaGraphql.json as { data: { books: Book[] } }).data.books)).toEqual(ids(expected));
  });

  it.each(NEEDLES)('users ?keyword=%s: 200, exactly the profiles whose name or email contains it', async (needle) => {
    const expected = (await allProfiles()).filter((profile) => [profile.firstName, profile.lastName, profile.email].some((field) => contains(field, needle)));
    const answer = await get(`/api/user/search?keyword=${encodeURIComponent(needle)}`);
    expect(answer.status).toBe(200);
    expect(ids(answer.json as Profile[])).toEqual(ids(expected));
    const viaGraphql = await gql('query ($k: String!) { searchUsers(keyword: $k) { userId } }', { k: needle });
    expect(ids((viaGraphql.json as { data: { searchUsers: Profile[] } }).data.searchUsers)).toEqual(ids(expected));
  });

  it('the wildcards really are literal: % and _ find only the rows holding them, not every row', async () => {
    const books = await allBooks();
    const percent = (await get('/api/books?limit=100&q=%25')).json as Book[];
    expect(percent.map((book) => book.title).sort()).toEqual(['The 100% Pure Book', 'The Fifty %_ Mix Book']);
    expect(percent.length).toBeLessThan(books.length);
    const underscore = (await get('/api/user/search?keyword=_')).json as Profile[];
    expect(underscore.map((profile) => profile.firstName).sort()).toEqual(['Fifty %_ Mix', 'Under_score']);
  });

  it('the tables are intact and every profile and book still reads', async () => {
    expect((await allBooks()).length).toBeGreaterThanOrEqual(TRICKY_TEXTS.length);
    expect((await allProfiles()).length).toBeGreaterThanOrEqual(TRICKY_TEXTS.length + 1);
    const health = await send(system.url, { method: 'GET', path: '/actuator/health' });
    expect(health.status).toBe(200);
  });
});
