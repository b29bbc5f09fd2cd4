/**
 * The catalogue at volume: cover upload latency (sequential uploads of a ~200 KB PNG through the
 * book service, on the directory store and on an S3 store, s3rver through @aws-sdk/client-s3),
 * and `GET /api/books/` answering the whole catalogue of each of `books` sizes: bytes on the wire and
 * time, uncompressed, gzip, br, and revalidated (304). MySQL when DB_URL is set. Build, then:
 * node dist/bench/catalogue.js [uploads=100] [books=10000,100000].
 */
import 'reflect-metadata';
import request from 'supertest';
import { catalogueReferences, nextIsbn13 } from '../test/commerce';
import { pngOfSize } from '../test/images';
import { S3RVER_CREDENTIALS, S3Server } from '../test/s3-server';
import { adminSession, startStack, type Stack } from '../test/stack';
import { benchBook, insertBooks } from './books';
import { rawRequest } from '../test/gateway';
import { latencies, percentile } from './measure';

const round = (ms: number) => Math.round(ms * 10) / 10;

async function uploads(stack: Stack, count: number): Promise<{ p50Ms: number; p99Ms: number; bytes: number }> {
  const admin = await adminSession(stack);
  const refs = await catalogueReferences(stack, admin.bearer);
  const created = await request(stack.urls.book)
    .post('/api/books/create')
    .set('Authorization', admin.bearer)
    .send({ isbn: nextIsbn13(), title: 'Bench cover', price: 1, language: 'en', publisherId: refs.publisherId, categoryId: refs.categoryId, authorIds: [refs.authorId] });
  const png = pngOfSize(200 * 1024);
  const times = await latencies(count, 5, async () => {
    const res = await request(stack.urls.book).post(`/api/books/${created.body.id}/cover`).set('Authorization', admin.bearer).attach('file', png, 'cover.png');
    if (res.status !== 200) throw new Error(`upload answered ${res.status}`);
  });
  return { p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)), bytes: png.length };
}

/** Books written straight into the book service's tables (the HTTP path is not what is measured), numbered from `from`. */
async function fill(stack: Stack, from: number, to: number): Promise<void> {
  const admin = await adminSession(stack);
  const refs = await catalogueReferences(stack, admin.bearer);
  const db = stack.services.book!.db;
  const now = new Date();
  for (let start = from; start < to; start += 500) {
    const books = Array.from({ length: Math.min(500, to - start) }, (_, i) =>
      benchBook(
        { title: `Volume ${String(start + i).padStart(6, '0')}`, description: 'A book of the benchmark catalogue.', publisherId: refs.publisherId, categoryId: refs.categoryId },
        now,
      ),
    );
    await insertBooks(db, books, () => refs.authorId);
  }
}

/**
 * The whole catalogue as a shop loads it (`GET /api/books/`), raw bytes on the wire: as it was sent
 * before compression and validators (no Accept-Encoding), in gzip and in br, and revalidated with
 * the tag of the first load (304). Each: p50 and max over `times` requests after 2 warm-ups, so the
 * compressed loads reuse what the first one compressed; `brAfterChange` is the first br load after
 * each of 5 changes of the catalogue, compressed anew.
 */
async function wholeList(stack: Stack, times: number): Promise<Record<string, unknown>> {
  let books = 0;
  const measured: Record<string, { p50Ms: number; maxMs: number; wireBytes: number; status: number }> = {};
  const ways: [string, Record<string, string>][] = [
    ['identity', {}],
    ['gzip', { 'Accept-Encoding': 'gzip' }],
    ['br', { 'Accept-Encoding': 'gzip, deflate, br' }],
  ];
  let tag = '';
  for (const [name, headers] of [...ways, ['revalidated', {}] as [string, Record<string, string>]]) {
    let wireBytes = 0;
    let status = 0;
    const sent = name === 'revalidated' ? { 'Accept-Encoding': 'gzip, deflate, br', 'If-None-Match': tag } : headers;
    const samples = await latencies(times, 2, async () => {
      const res = await rawRequest(stack.urls.book, 'GET', '/api/books/', sent);
      books = Number(res.headers['x-total-count'] ?? books);
      wireBytes = res.body.length;
      status = res.status;
      if (name === 'br') tag = String(res.headers.etag);
    });
    measured[name] = { p50Ms: round(percentile(samples, 50)), maxMs: round(Math.max(...samples)), wireBytes, status };
  }
  // The first br load after each change of the catalogue (one more book): nothing compressed to reuse.
  const changed: number[] = [];
  for (let i = 0; i < Math.min(times, 5); i += 1) {
    await fill(stack, books + i, books + i + 1);
    changed.push(
      ...(await latencies(1, 0, async () => {
        await rawRequest(stack.urls.book, 'GET', '/api/books/', { 'Accept-Encoding': 'gzip, deflate, br' });
      })),
    );
  }
  measured.brAfterChange = { p50Ms: round(percentile(changed, 50)), maxMs: round(Math.max(...changed)), wireBytes: 0, status: 200 };
  return { books, ...measured };
}

async function main(): Promise<Record<string, unknown>> {
  const uploadCount = Number(process.argv[2] ?? 100);
  const bookCounts = (process.argv[3] ?? '10000,100000').split(',').map(Number);
  const local = await startStack({ services: ['book'], env: { LOG_LEVEL: 'warn' } });
  let directory;
  const list: Record<string, unknown>[] = [];
  try {
    directory = await uploads(local, uploadCount);
    let filled = 0;
    for (const count of bookCounts) {
      await fill(local, filled, count);
      filled = count;
      list.push(await wholeList(local, count >= 100_000 ? 5 : 10));
    }
  } finally {
    await local.stop();
  }
  Object.assign(process.env, S3RVER_CREDENTIALS);
  const s3 = await S3Server.start();
  const remote = await startStack({ services: ['book'], env: { LOG_LEVEL: 'warn', ...s3.env } });
  let bucket;
  try {
    bucket = await uploads(remote, uploadCount);
  } finally {
    await remote.stop();
    await s3.destroy();
  }
  return { bench: 'catalogue', coverUpload: { directory, s3rver: bucket, uploads: uploadCount }, listWholeCatalogue: list };
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
