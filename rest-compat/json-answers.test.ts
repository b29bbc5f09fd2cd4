/** The pieces of rest-compat/json-answers.ts that need no server: the coding negotiated, the tags that revalidate, the compressed bytes kept. */
import { CompressedCache, negotiateCoding, revalidates } from './json-answers';

describe('negotiateCoding', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip, deflate, br, zstd', 'br'],
    ['GZIP', 'gzip'],
    ['br;q=0.8, gzip', 'gzip'],
    ['br;q=1.0, gzip;q=1.0', 'br'],
    ['*;q=0.5', 'br'],
    ['*, br;q=0', 'gzip'],
    ['gzip;q=0, br;q=0', 'identity'],
    ['gzip;q=abc', 'identity'],
    ['identity', 'identity'],
  ])('answers %p in %s', (header, coding) => {
    expect(negotiateCoding(header)).toBe(coding);
  });
});

describe('revalidates', () => {
  it('takes the tag of any coding of the same JSON, weak or strong, in a list, or *', () => {
    for (const header of ['"d1"', '"d1-br"', 'W/"d1-gzip"', '"other", "d1"', '*']) expect({ header, match: revalidates(header, 'd1') }).toEqual({ header, match: true });
    for (const header of [undefined, '', '"d2"', '"d1-zstd"', 'd1']) expect({ header, match: revalidates(header, 'd1') }).toEqual({ header, match: false });
  });
});

describe('CompressedCache', () => {
  it('keeps the most recently used entries within its byte budget, and nothing larger than the budget', () => {
    const cache = new CompressedCache(10);
    cache.set('a', Buffer.alloc(4));
    cache.set('b', Buffer.alloc(4));
    expect(cache.get('a')?.length).toBe(4);
    cache.set('c', Buffer.alloc(4));
    expect([cache.get('a')?.length, cache.get('b'), cache.get('c')?.length]).toEqual([4, undefined, 4]);
    cache.set('huge', Buffer.alloc(11));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('a')?.length).toBe(4);
  });
});
