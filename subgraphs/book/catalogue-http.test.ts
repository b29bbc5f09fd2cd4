/**
 * The catalogue as shop clients load it on every page (CONTRACT §1.3): compressed in the coding the
 * client prefers, revalidated with its ETag for a 304, cacheable by anyone since it is the same for
 * every caller; answers that are not public reads stay out of caches.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { rawRequest } from '../../test/gateway';
import { bookService, tag as uniqueTag } from '../../test/book-service';

const catalogue = bookService();
const { createBook, createAuthor } = catalogue;
const get = (path: string, headers: Record<string, string> = {}) => rawRequest(catalogue.stack.urls.book, 'GET', path, headers);

beforeAll(async () => {
  // Enough books for the list to pass the compression threshold (1 KiB).
  for (let i = 0; i < 4; i += 1) await createBook();
});

describe('the catalogue over HTTP', () => {
  it('sends the whole catalogue in the coding the client prefers, the same JSON once decoded, with Vary: Accept-Encoding', async () => {
    const plain = await get('/api/books/');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(1024);
    expect(plain.headers.vary).toMatch(/Accept-Encoding/);

    const decoders = { br: brotliDecompressSync, gzip: gunzipSync };
    const cases: [string, 'br' | 'gzip' | undefined][] = [
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0.5, gzip;q=1', 'gzip'],
      ['*', 'br'],
      ['br;q=0, gzip;q=0, identity', undefined],
      ['deflate', undefined],
    ];
    for (const [accept, coding] of cases) {
      const res = await get('/api/books/', { 'Accept-Encoding': accept });
      expect({ accept, status: res.status, coding: res.headers['content-encoding'], type: res.headers['content-type'] }).toEqual({
        accept,
        status: 200,
        coding,
        type: 'application/json; charset=utf-8',
      });
      expect(Number(res.headers['content-length'])).toBe(res.body.length);
      const decoded = coding ? decoders[coding](res.body) : res.body;
      expect(decoded.equals(plain.body)).toBe(true);
      if (coding) expect(res.body.length).toBeLessThan(plain.body.length / 2);
    }
  });

  it('sends a small answer as it is, whatever the client accepts', async () => {
    const author = await createAuthor('Ada', uniqueTag());
    const res = await get(`/api/authors/${author}`, { 'Accept-Encoding': 'br, gzip' });
    expect(res.status).toBe(200);
    expect(res.body.length).toBeLessThan(1024);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(res.body.toString()).id).toBe(author);
  });

  it('revalidates a public read: one strong ETag per coding, 304 with no body for the tag of any coding, a new tag once the catalogue changed', async () => {
    const first = await get('/api/books/', { 'Accept-Encoding': 'gzip' });
    expect(first.headers['cache-control']).toBe('public, no-cache');
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^"[A-Za-z0-9_-]+-gzip"$/);
    const plainTag = (await get('/api/books/')).headers.etag as string;
    expect(plainTag).toBe(tag.replace(/-gzip"$/, '"'));

    for (const [accept, sent] of [
      ['gzip', tag],
      ['br', tag],
      [undefined, `"unrelated", W/${plainTag}`],
    ] as const) {
      const again = await get('/api/books/', { ...(accept ? { 'Accept-Encoding': accept } : {}), 'If-None-Match': sent });
      expect({ sent, status: again.status, bytes: again.body.length, cacheControl: again.headers['cache-control'] }).toEqual({
        sent,
        status: 304,
        bytes: 0,
        cacheControl: 'public, no-cache',
      });
    }

    await createBook();
    const changed = await get('/api/books/', { 'Accept-Encoding': 'gzip', 'If-None-Match': tag });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(tag);
    expect(JSON.parse(gunzipSync(changed.body).toString())).toHaveLength(JSON.parse((await get('/api/books/')).body.toString()).length);
  });

  it('makes every public read of the catalogue revalidatable, and nothing else; the subgraph answers its gateway as it is', async () => {
    const book = await createBook();
    const author = await createAuthor('Ada', uniqueTag());
    for (const path of ['/api/books', `/api/books/${book.id}`, '/api/books/search?q=a', '/api/authors/', `/api/authors/${author}`, '/api/categories/', '/api/publishers/']) {
      const res = await get(path);
      expect({ path, status: res.status, cacheControl: res.headers['cache-control'], tagged: typeof res.headers.etag }).toEqual({
        path,
        status: 200,
        cacheControl: 'public, no-cache',
        tagged: 'string',
      });
    }
    const notFound = await get(`/api/books/${author}`);
    expect({ status: notFound.status, cacheControl: notFound.headers['cache-control'], etag: notFound.headers.etag }).toEqual({
      status: 404,
      cacheControl: undefined,
      etag: undefined,
    });
    const subgraph = await rawRequest(
      catalogue.stack.urls.book,
      'POST',
      '/graphql',
      { 'Content-Type': 'application/json', 'Accept-Encoding': 'br, gzip' },
      JSON.stringify({ query: '{ books(limit: 100) { id isbn title description price language publishedDate createdAt updatedAt } }' }),
    );
    expect(subgraph.body.length).toBeGreaterThan(1024);
    expect({ status: subgraph.status, coding: subgraph.headers['content-encoding'] }).toEqual({ status: 200, coding: undefined });
    const batch = await rawRequest(catalogue.stack.urls.book, 'POST', '/api/books/batch', { 'Content-Type': 'application/json' }, JSON.stringify([book.id]));
    expect({ status: batch.status, cacheControl: batch.headers['cache-control'], etag: batch.headers.etag }).toEqual({ status: 200, cacheControl: undefined, etag: undefined });
  });
});
