/**
 * The cover upload body (CONTRACT §4): multipart/form-data with one part named `file`, at most
 * 5 MiB, a JPEG, PNG or WebP by its bytes (the declared type and file name are not trusted).
 * Parsed with busboy; other parts are read and ignored.
 */
import busboy from 'busboy';
import type { Request } from 'express';
import { AppError, badRequest } from '../../platform/errors';
import { sniffImageType, type CoverImage } from './covers';

export const MAX_COVER_BYTES = 5 * 1024 * 1024;
/** Room for the multipart framing around a full-size file; a body declared larger is refused before it is read. */
const MAX_BODY_BYTES = MAX_COVER_BYTES + 64 * 1024;

const fileRequired = () => badRequest('Cover image file is required.', 'COVER_REQUIRED');
const tooLarge = () => badRequest('Cover image must be 5MB or smaller.', 'COVER_TOO_LARGE');
const wrongType = () => badRequest('Only JPEG, PNG, and WebP images are allowed (image/jpeg, image/png, image/webp).', 'COVER_TYPE');

export function parseCoverUpload(req: Request): Promise<CoverImage> {
  if (!req.is('multipart/form-data')) {
    return Promise.reject(new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be multipart/form-data with a part named file', 415));
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) {
    return Promise.reject(new AppError('PAYLOAD_TOO_LARGE', 'Cover image must be 5MB or smaller.', 413));
  }
  return new Promise<CoverImage>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: MAX_COVER_BYTES + 1, files: 1, fields: 20, parts: 25 } });
    } catch {
      reject(badRequest('The multipart body could not be read (missing boundary)', 'MALFORMED_MULTIPART'));
      return;
    }
    const chunks: Buffer[] = [];
    let seen = false;
    let truncated = false;
    let settled = false;
    /**
     * The first outcome wins; a failure drops what was buffered and stops parsing. The rest of the
     * body is still read (and thrown away), so the 400 reaches a client that is still sending.
     */
    const fail = (error: AppError) => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      req.unpipe(parser);
      req.resume();
      parser.destroy();
      reject(error);
    };
    const unreadable = () => fail(badRequest('The multipart body could not be read', 'MALFORMED_MULTIPART'));
    parser.on('file', (name, stream) => {
      // busboy destroys a part's stream with an error when the body ends inside it ("Unexpected end
      // of form"); unheard, that error would be an uncaught exception that stops the process.
      stream.on('error', unreadable);
      if (name !== 'file' || seen) {
        stream.resume();
        return;
      }
      seen = true;
      stream.on('data', (chunk: Buffer) => {
        if (!settled) chunks.push(chunk);
      });
      // busboy stops at the limit (one byte over the largest cover) and says so.
      stream.on('limit', () => {
        truncated = true;
      });
    });
    parser.on('error', unreadable);
    parser.on('close', () => {
      if (settled) return;
      if (!seen) return fail(fileRequired());
      const bytes = Buffer.concat(chunks);
      if (truncated || bytes.length > MAX_COVER_BYTES) return fail(tooLarge());
      if (bytes.length === 0) return fail(fileRequired());
      const contentType = sniffImageType(bytes);
      if (!contentType) return fail(wrongType());
      settled = true;
      resolve({ bytes, contentType });
    });
    req.on('error', () => fail(badRequest('The request body could not be read', 'BAD_REQUEST')));
    // A client that goes away mid-body: the parser would wait forever for the rest (no answer can reach it).
    req.on('close', () => {
      if (!req.complete) fail(badRequest('The request body ended early', 'BAD_REQUEST'));
    });
    req.pipe(parser);
  });
}
