/**
 * A cover upload whose body ends early (CONTRACT §1.2): inside the file part, inside a part's
 * headers, or by the client going away. Sent over a raw socket, since an HTTP client would not send
 * a body shorter than its Content-Length. The answer, where one is possible, is a 400 envelope; the
 * service keeps answering and nothing is stored.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import request from 'supertest';
import { createBook } from '../../test/commerce';
import { startGateway } from '../../test/gateway';
import { expectEnvelope, StackSuite, stackSuite } from '../../test/harness';
import { pngOfSize } from '../../test/images';

const suite = stackSuite(new StackSuite(), { services: ['book'] });

const BOUNDARY = 'cutoffboundary';
const filePartHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="cover.png"\r\nContent-Type: image/png\r\n\r\n`;

interface CutOffAnswer {
  /** The raw answer, empty when the service closed the connection without one. */
  raw: string;
  closed: boolean;
}

/**
 * Sends the upload's head with `declaredLength` and then only `body`; with `hangUp`, ends the socket
 * right after (the client going away), otherwise waits for the answer with the socket open.
 */
function sendCutOff(bookId: string, body: Buffer, declaredLength: number, hangUp: boolean, baseUrl = suite.stack.urls.book): Promise<CutOffAnswer> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    socket.on('close', () => resolve({ raw: Buffer.concat(chunks).toString('latin1'), closed: true }));
    socket.on('connect', () => {
      const head = [
        `POST /api/books/${bookId}/cover HTTP/1.1`,
        'Host: 127.0.0.1',
        `Authorization: ${suite.admin.bearer}`,
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
        `Content-Length: ${declaredLength}`,
        'Connection: close',
        '',
        '',
      ].join('\r\n');
      socket.write(head);
      socket.write(body);
      if (hangUp) socket.end();
    });
  });
}

/** The status and parsed body of a raw HTTP/1.1 answer. */
function parseAnswer(raw: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) };
}

async function expectNothingStored(bookId: string): Promise<void> {
  expect((await request(suite.stack.urls.book).get(`/api/books/${bookId}`)).body.coverImageUrl).toBeNull();
  const dir = path.join(suite.stack.config.dataDir, 'covers', bookId);
  expect(fs.existsSync(dir) ? fs.readdirSync(dir) : []).toEqual([]);
}

async function expectStillServing(bookId: string): Promise<void> {
  const res = await request(suite.stack.urls.book)
    .post(`/api/books/${bookId}/cover`)
    .set('Authorization', suite.admin.bearer)
    .attach('file', pngOfSize(1000), { filename: 'cover.png', contentType: 'image/png' });
  expect(res.status).toBe(200);
}

describe('a cover upload whose body ends early', () => {
  it('answers 400 when the body (its Content-Length all sent) ends inside the file part', async () => {
    const book = await createBook(suite.stack, suite.admin.bearer, 'Cut in the file', 10);
    const body = Buffer.concat([Buffer.from(filePartHead), pngOfSize(2000)]);
    const answer = await sendCutOff(book.id, body, body.length, false);
    const parsed = parseAnswer(answer.raw);
    expectEnvelope({ status: parsed.status, headers: parsed.headers, body: parsed.body }, 400, 'The multipart body could not be read');
    await expectNothingStored(book.id);
    await expectStillServing(book.id);
  });

  it('answers 400 when the body ends inside a part header', async () => {
    const book = await createBook(suite.stack, suite.admin.bearer, 'Cut in the headers', 10);
    const body = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="fi`);
    const parsed = parseAnswer((await sendCutOff(book.id, body, body.length, false)).raw);
    expectEnvelope({ status: parsed.status, headers: parsed.headers, body: parsed.body }, 400, 'The multipart body could not be read');
    await expectNothingStored(book.id);
    await expectStillServing(book.id);
  });

  it('keeps serving when the client declares more than it sends and hangs up inside the file part', async () => {
    const book = await createBook(suite.stack, suite.admin.bearer, 'Hung up', 10);
    const body = Buffer.concat([Buffer.from(filePartHead), pngOfSize(64 * 1024)]);
    const answer = await sendCutOff(book.id, body, body.length + 100_000, true);
    expect(answer.closed).toBe(true);
    // Whatever the server could still say on a half-closed connection is a 400, never a 500.
    if (answer.raw !== '') expect(parseAnswer(answer.raw).status).toBe(400);
    await expectNothingStored(book.id);
    await expectStillServing(book.id);
  });

  it('answers the same 400 through the gateway', async () => {
    const gateway = await startGateway(suite.stack.config);
    try {
      const book = await createBook(suite.stack, suite.admin.bearer, 'Cut behind the gateway', 10);
      const body = Buffer.concat([Buffer.from(filePartHead), pngOfSize(2000)]);
      const parsed = parseAnswer((await sendCutOff(book.id, body, body.length, false, gateway.url)).raw);
      expectEnvelope({ status: parsed.status, headers: parsed.headers, body: parsed.body }, 400, 'The multipart body could not be read');
      await expectNothingStored(book.id);
    } finally {
      await gateway.stop();
    }
  });
});
