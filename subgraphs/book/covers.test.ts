import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { catalogueReferences, createBook } from '../../test/commerce';
import { adminSession, expectEnvelope, registeredUser, startStack, type Stack } from '../../test/harness';
import { pngOfSize } from '../../test/images';
import { S3RVER_CREDENTIALS, S3Server } from '../../test/s3-server';
import { MAX_COVER_BYTES } from './upload';

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(200, 7), Buffer.from([0xff, 0xd9])]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(40, 1)]);

interface StoreUnderTest {
  name: string;
  env(): Promise<Record<string, string>>;
  /** Whether the object behind a cover URL is still stored. */
  stored(url: string): Promise<boolean>;
  /** Makes the store fail its next writes; `heal` undoes it. */
  breakStore(): Promise<void>;
  heal(): Promise<void>;
  cleanUp(): Promise<void>;
}

let stack: Stack;
let s3: S3Server | undefined;

const localStore: StoreUnderTest = {
  name: 'a directory under DATA_DIR (the embedded default)',
  env: async () => ({}),
  stored: async (url) => {
    const version = new URL(url).searchParams.get('v');
    const dir = path.join(stack.config.dataDir, 'covers', new URL(url).pathname.split('/')[3]);
    return fs.existsSync(dir) && fs.readdirSync(dir).some((file) => file.startsWith(`${version}.`));
  },
  // A file where the covers directory would be: nothing can be written under it.
  breakStore: async () => {
    fs.rmSync(path.join(stack.config.dataDir, 'covers'), { recursive: true, force: true });
    fs.writeFileSync(path.join(stack.config.dataDir, 'covers'), 'not a directory');
  },
  heal: async () => fs.rmSync(path.join(stack.config.dataDir, 'covers'), { force: true }),
  cleanUp: async () => undefined,
};

const s3Store: StoreUnderTest = {
  name: 'an S3 bucket (s3rver, through @aws-sdk/client-s3)',
  env: async () => {
    Object.assign(process.env, S3RVER_CREDENTIALS);
    s3 = await S3Server.start();
    return s3.env;
  },
  stored: async (url) => (await fetch(url)).status === 200,
  breakStore: async () => s3!.pause(),
  heal: async () => s3!.resume(),
  cleanUp: async () => s3?.destroy(),
};

describe.each([localStore, s3Store])('book covers in $name', (store) => {
  let adminBearer: string;
  let userBearer: string;
  beforeAll(async () => {
    stack = await startStack({ services: ['book'], env: await store.env() });
    adminBearer = (await adminSession(stack)).bearer;
    userBearer = (await registeredUser(stack)).bearer;
  });
  afterAll(async () => {
    await stack?.stop();
    await store.cleanUp();
  });

  const upload = (bookId: string, bytes: Buffer, filename = 'cover.png', contentType = 'image/png') =>
    request(stack.urls.book).post(`/api/books/${bookId}/cover`).set('Authorization', adminBearer).attach('file', bytes, { filename, contentType });

  /** What a browser gets from the book's `coverImageUrl` (the local store's URL names the gateway, so it is asked of the service). */
  async function fetchCover(url: string): Promise<{ status: number; type: string | null; cache: string | null; bytes: Buffer }> {
    const parsed = new URL(url);
    const target = s3 ? url : `${stack.urls.book}${parsed.pathname}${parsed.search}`;
    const res = await fetch(target);
    return { status: res.status, type: res.headers.get('content-type'), cache: res.headers.get('cache-control'), bytes: Buffer.from(await res.arrayBuffer()) };
  }

  it('stores a PNG (200 Book with coverImageUrl) and serves it back byte-identical', async () => {
    const book = await createBook(stack, adminBearer, 'Covered', 10);
    const png = pngOfSize(200 * 1024);
    const res = await upload(book.id, png);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: book.id, coverImageUrl: expect.stringMatching(/^http:\/\//) });
    expect((await request(stack.urls.book).get(`/api/books/${book.id}`)).body.coverImageUrl).toBe(res.body.coverImageUrl);
    const served = await fetchCover(res.body.coverImageUrl);
    expect(served.status).toBe(200);
    expect(served.type).toBe('image/png');
    expect(served.cache).toMatch(/max-age=31536000/);
    expect(served.bytes.equals(png)).toBe(true);
  });

  it('replaces a cover: a new URL with the new bytes, and the old object is gone', async () => {
    const book = await createBook(stack, adminBearer, 'Recovered', 10);
    const first = await upload(book.id, pngOfSize(10_000));
    const second = await upload(book.id, JPEG, 'cover.jpg', 'image/jpeg');
    expect(second.status).toBe(200);
    expect(second.body.coverImageUrl).not.toBe(first.body.coverImageUrl);
    const served = await fetchCover(second.body.coverImageUrl);
    expect(served.type).toBe('image/jpeg');
    expect(served.bytes.equals(JPEG)).toBe(true);
    expect(await store.stored(first.body.coverImageUrl)).toBe(false);
    expect(await store.stored(second.body.coverImageUrl)).toBe(true);
  });

  it('takes a WebP whatever content type the client declared', async () => {
    const book = await createBook(stack, adminBearer, 'Webbed', 10);
    const res = await upload(book.id, WEBP, 'cover.bin', 'application/octet-stream');
    expect(res.status).toBe(200);
    expect((await fetchCover(res.body.coverImageUrl)).type).toBe('image/webp');
  });

  it('refuses a text file renamed .png (400), keeping the old cover', async () => {
    const book = await createBook(stack, adminBearer, 'Text', 10);
    const kept = await upload(book.id, pngOfSize(5_000));
    const res = await upload(book.id, Buffer.from('just some text, not an image\n'.repeat(20)));
    expectEnvelope(res, 400, 'Only JPEG, PNG, and WebP images are allowed (image/jpeg, image/png, image/webp).');
    expect((await request(stack.urls.book).get(`/api/books/${book.id}`)).body.coverImageUrl).toBe(kept.body.coverImageUrl);
  });

  it('refuses 5 MiB + 1 byte and takes exactly 5 MiB', async () => {
    const book = await createBook(stack, adminBearer, 'Heavy', 10);
    const exact = Buffer.concat([pngOfSize(64), Buffer.alloc(MAX_COVER_BYTES - pngOfSize(64).length)]);
    expect(exact.length).toBe(MAX_COVER_BYTES);
    const over = Buffer.concat([exact, Buffer.from([0])]);
    const res = await upload(book.id, over);
    expectEnvelope(res, 400, 'Cover image must be 5MB or smaller.');
    expect((await request(stack.urls.book).get(`/api/books/${book.id}`)).body.coverImageUrl).toBeNull();
    expect((await upload(book.id, exact)).status).toBe(200);
  });

  it('answers 413 to a body declared far larger than any cover, before reading it', async () => {
    const book = await createBook(stack, adminBearer, 'Huge', 10);
    const res = await request(stack.urls.book)
      .post(`/api/books/${book.id}/cover`)
      .set('Authorization', adminBearer)
      .set('Content-Type', 'multipart/form-data; boundary=x')
      .set('Content-Length', String(50 * 1024 * 1024))
      .send(Buffer.alloc(10));
    expectEnvelope(res, 413);
  });

  it('answers 400 without a file part, 415 for a body that is not multipart', async () => {
    const book = await createBook(stack, adminBearer, 'Empty', 10);
    const noFile = await request(stack.urls.book).post(`/api/books/${book.id}/cover`).set('Authorization', adminBearer).field('other', 'value');
    expectEnvelope(noFile, 400, 'Cover image file is required.');
    const json = await request(stack.urls.book).post(`/api/books/${book.id}/cover`).set('Authorization', adminBearer).send({ file: 'x' });
    expectEnvelope(json, 415);
  });

  it('answers 404 for an unknown book, 400 for a bad id, 401 and 403 without an admin', async () => {
    const unknown = randomUUID();
    expectEnvelope(await upload(unknown, pngOfSize(1000)), 404, `Book not found: ${unknown}`);
    expectEnvelope(await upload('nope', pngOfSize(1000)), 400);
    const book = await createBook(stack, adminBearer, 'Guarded', 10);
    expectEnvelope(await request(stack.urls.book).post(`/api/books/${book.id}/cover`).attach('file', pngOfSize(1000), 'c.png'), 401);
    expectEnvelope(await request(stack.urls.book).post(`/api/books/${book.id}/cover`).set('Authorization', userBearer).attach('file', pngOfSize(1000), 'c.png'), 403);
  });

  it('answers 502 when the store fails, leaving the book as it was', async () => {
    const book = await createBook(stack, adminBearer, 'Unlucky', 10);
    await store.breakStore();
    try {
      expectEnvelope(await upload(book.id, pngOfSize(1000)), 502, 'The cover image store failed');
    } finally {
      await store.heal();
    }
    expect((await request(stack.urls.book).get(`/api/books/${book.id}`)).body.coverImageUrl).toBeNull();
    expect((await upload(book.id, pngOfSize(1000))).status).toBe(200);
  });

  it('deletes the cover with the book', async () => {
    const book = await createBook(stack, adminBearer, 'Doomed', 10);
    const res = await upload(book.id, pngOfSize(1000));
    await request(stack.urls.book).delete(`/api/books/${book.id}`).set('Authorization', adminBearer);
    expect(await store.stored(res.body.coverImageUrl)).toBe(false);
  });

  it('answers 404 at GET /api/books/{id}/cover for a book without a cover', async () => {
    const refs = await catalogueReferences(stack, adminBearer);
    expect(refs.authorId).toBeDefined();
    const book = await createBook(stack, adminBearer, 'Bare', 10);
    expectEnvelope(await request(stack.urls.book).get(`/api/books/${book.id}/cover`), 404);
  });
});
