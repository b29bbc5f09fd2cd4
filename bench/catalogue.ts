/**
 * The catalogue at volume: cover upload latency (sequential uploads of a ~200 KB PNG through the
 * book service, on the directory store and on an S3 store, s3rver through @aws-sdk/client-s3),
 * and the time of `GET /api/books/` answering the whole catalogue of `books` books. MySQL when
 * DB_URL is set. Build, then: node dist/bench/catalogue.js [uploads=100] [books=10000].
 */
import 'reflect-metadata';
import request from 'supertest';
import { catalogueReferences, nextIsbn13 } from '../test/commerce';
import { pngOfSize } from '../test/images';
import { S3RVER_CREDENTIALS, S3Server } from '../test/s3-server';
import { adminSession, startStack, type Stack } from '../test/stack';
import { benchBook, insertBooks } from './books';
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

/** `count` books written straight into the book service's tables (the HTTP path is not what is measured). */
async function fill(stack: Stack, count: number): Promise<void> {
  const admin = await adminSession(stack);
  const refs = await catalogueReferences(stack, admin.bearer);
  const db = stack.services.book!.db;
  const now = new Date();
  for (let start = 0; start < count; start += 500) {
    const books = Array.from({ length: Math.min(500, count - start) }, (_, i) =>
      benchBook(
        { title: `Volume ${String(start + i).padStart(6, '0')}`, description: 'A book of the benchmark catalogue.', publisherId: refs.publisherId, categoryId: refs.categoryId },
        now,
      ),
    );
    await insertBooks(db, books, () => refs.authorId);
  }
}

async function wholeList(stack: Stack, count: number): Promise<{ p50Ms: number; maxMs: number; books: number; bodyBytes: number }> {
  await fill(stack, count);
  let books = 0;
  let bodyBytes = 0;
  const times = await latencies(10, 2, async () => {
    const res = await request(stack.urls.book).get('/api/books/');
    books = Number(res.headers['x-total-count']);
    bodyBytes = res.text.length;
  });
  return { p50Ms: round(percentile(times, 50)), maxMs: round(Math.max(...times)), books, bodyBytes };
}

async function main(): Promise<Record<string, unknown>> {
  const uploadCount = Number(process.argv[2] ?? 100);
  const bookCount = Number(process.argv[3] ?? 10_000);
  const local = await startStack({ services: ['book'], env: { LOG_LEVEL: 'warn' } });
  let directory;
  let list;
  try {
    directory = await uploads(local, uploadCount);
    list = await wholeList(local, bookCount);
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
