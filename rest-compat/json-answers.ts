/**
 * JSON answers as slow links and HTTP caches want them (CONTRACT §1.3):
 *
 * - **Compression.** A JSON answer of at least `COMPRESS_MIN_BYTES` is sent in the coding the
 *   client's `Accept-Encoding` prefers of `br` and `gzip` (a tie goes to `br`; `q=0` refuses one),
 *   with `Vary: Accept-Encoding`; smaller answers, and clients that accept neither, get the bytes as
 *   they are. Brotli runs at quality 4 and gzip at level 6: an answer that depends on the caller is
 *   compressed for each request that gets it, so the fast settings (the whole 10,000-book catalogue
 *   in tens of milliseconds, off the event loop in libuv's pool) beat the last per cent of size. A
 *   public read's compressed bytes are kept by digest (32 MiB in all), so an unchanged catalogue is
 *   compressed once, not per shop. The negotiation is written here rather than taken from Express's
 *   `req.acceptsEncodings`, whose tie between equal weights goes to the client's order; here a tie
 *   goes to `br`, the smaller.
 * - **Public reads** (`publicRead` on a route: the catalogue, whose answers are the same for every
 *   caller) carry a strong `ETag` and `Cache-Control: public, no-cache`: any cache may keep them and
 *   must ask again before using them, since stock moves; `If-None-Match` with the current tag is
 *   answered 304 with no body. The tag is a digest of the JSON; a compressed representation's tag
 *   carries its coding (`"<digest>-br"`), as RFC 9110 wants one tag per representation, and a tag of
 *   any coding of the same JSON revalidates. Answers that depend on the caller get no
 *   `Cache-Control` from here and no tag.
 *
 * Only REST answers sent whole through `res.send` (`res.json`) are touched; streamed ones, and a
 * subgraph's GraphQL answers to the gateway, pass as they are.
 */
import { hash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { RequestHandler, Response } from 'express';

export const COMPRESS_MIN_BYTES = 1024;
export const PUBLIC_READ_CACHE_CONTROL = 'public, no-cache';

export type Coding = 'br' | 'gzip' | 'identity';

const brotliCompress = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

const compressors: Record<Exclude<Coding, 'identity'>, (bytes: Buffer) => Promise<Buffer>> = {
  br: (bytes) =>
    brotliCompress(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      },
    }),
  gzip: (bytes) => gzip(bytes, { level: 6 }),
};

/**
 * The compressed bytes of the latest public reads, by digest and coding, within a byte budget: the
 * shops that load an unchanged catalogue one after another get the bytes the first one's request
 * compressed (the digest is computed for the ETag anyway). Oldest out first.
 */
export class CompressedCache {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly budgetBytes: number) {}

  get(key: string): Buffer | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: Buffer): void {
    if (value.length > this.budgetBytes || this.entries.has(key)) return;
    this.entries.set(key, value);
    this.bytes += value.length;
    for (const [oldest, kept] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.entries.delete(oldest);
      this.bytes -= kept.length;
    }
  }
}

/** The coding to answer in, by `Accept-Encoding` (RFC 9110 §12.5.3): the higher weight of br and gzip, br on a tie. */
export function negotiateCoding(header: string | undefined): Coding {
  if (!header) return 'identity';
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
    if (!name) continue;
    const q = params.find((param) => param.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    weights.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const weightOf = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0;
  const [br, gzip] = [weightOf('br'), weightOf('gzip')];
  if (br > 0 && br >= gzip) return 'br';
  return gzip > 0 ? 'gzip' : 'identity';
}

const tagOf = (digest: string, coding: Coding) => (coding === 'identity' ? `"${digest}"` : `"${digest}-${coding}"`);

/** Whether `If-None-Match` names the JSON of `digest` in any coding (weak comparison, as RFC 9110 §13.1.2 has it). */
export function revalidates(ifNoneMatch: string | undefined, digest: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((listed) => {
    const tag = listed.trim().replace(/^W\//, '');
    return tag === '*' || tag === `"${digest}"` || tag === `"${digest}-br"` || tag === `"${digest}-gzip"`;
  });
}

/** On a route whose answer is the same for every caller: it may be cached and revalidated (see above). */
export const publicRead: RequestHandler = (_req, res, next) => {
  res.locals.publicRead = true;
  next();
};

const isJson = (type: unknown) => typeof type === 'string' && /^application\/([a-z.+-]*\+)?json\b/i.test(type);

/** Installed before the routes of a service: wraps `res.send` to answer JSON as above. */
export function jsonAnswers(cache = new CompressedCache(32 * 1024 * 1024)): RequestHandler {
  return (req, res, next) => {
    // A subgraph's answers go to a gateway next to it, which has no use for compressed bytes.
    if (req.path === '/graphql' || req.path.startsWith('/graphql/')) {
      next();
      return;
    }
    const send = res.send.bind(res) as (body: unknown) => Response;
    res.send = (body: unknown) => {
      if (res.statusCode !== 200 || (typeof body !== 'string' && !Buffer.isBuffer(body)) || !isJson(res.getHeader('content-type'))) return send(body);
      const compressible = (typeof body === 'string' ? Buffer.byteLength(body) : body.length) >= COMPRESS_MIN_BYTES;
      const cacheable = res.locals.publicRead === true && (req.method === 'GET' || req.method === 'HEAD');
      // Most answers are small and the caller's own: sent as they came, without a copy.
      if (!compressible && !cacheable) return send(body);
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      if (compressible) res.vary('Accept-Encoding');
      const coding = compressible ? negotiateCoding(req.headers['accept-encoding']) : 'identity';
      let cacheKey: string | undefined;
      if (cacheable) {
        const digest = hash('sha1', bytes, 'base64url');
        cacheKey = `${coding}:${digest}`;
        res.setHeader('Cache-Control', PUBLIC_READ_CACHE_CONTROL);
        res.setHeader('ETag', tagOf(digest, coding));
        if (revalidates(req.headers['if-none-match'], digest)) {
          res.status(304).removeHeader('Content-Type');
          res.end();
          return res;
        }
      }
      if (coding === 'identity') return send(bytes);
      const answer = (compressed: Buffer) => {
        res.setHeader('Content-Encoding', coding);
        return send(compressed);
      };
      const cached = cacheKey === undefined ? undefined : cache.get(cacheKey);
      if (cached) return answer(cached);
      compressors[coding](bytes).then(
        (compressed) => {
          if (cacheKey !== undefined) cache.set(cacheKey, compressed);
          answer(compressed);
        },
        () => send(bytes),
      );
      return res;
    };
    next();
  };
}
