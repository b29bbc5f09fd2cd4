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
    parser.on('file', (name, stream) => {
      if (name !== 'file' || seen) {
        stream.resume();
        return;
      }
      seen = true;
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // busboy stops at the limit (one byte over the largest cover) and says so.
      stream.on('limit', () => {
        truncated = true;
      });
    });
    parser.on('error', () => reject(badRequest('The multipart body could not be read', 'MALFORMED_MULTIPART')));
    parser.on('close', () => {
      if (!seen) return reject(fileRequired());
      const bytes = Buffer.concat(chunks);
      if (truncated || bytes.length > MAX_COVER_BYTES) return reject(tooLarge());
      if (bytes.length === 0) return reject(fileRequired());
      const contentType = sniffImageType(bytes);
      if (!contentType) return reject(wrongType());
      resolve({ bytes, contentType });
    });
    req.on('error', () => reject(badRequest('The request body could not be read', 'BAD_REQUEST')));
    req.pipe(parser);
  });
}
