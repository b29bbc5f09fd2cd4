/**
 * Where book covers live (CONTRACT §4), behind one interface: a directory under DATA_DIR whose
 * files the book service serves itself (the embedded default), or an S3-compatible bucket through
 * `@aws-sdk/client-s3` when S3_BUCKET is set. Each upload gets a new key, so a cover URL never
 * changes its bytes and may be cached for a year; the replaced object is deleted.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../platform/config';
import { AppError } from '../../platform/errors';

export interface CoverImage {
  bytes: Buffer;
  contentType: CoverType;
}

export type CoverType = 'image/jpeg' | 'image/png' | 'image/webp';

export const COVER_EXTENSIONS: Record<CoverType, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp' };

export interface CoverStore {
  /** Stores the bytes under `key`; throws a 502 AppError when the store fails. */
  put(key: string, image: CoverImage): Promise<void>;
  /** Deletes `key`; a key already gone is fine. */
  remove(key: string): Promise<void>;
  /** The URL a browser loads the cover from. */
  url(bookId: string, key: string): string;
  /** The stored image, for stores the service serves itself; undefined for a bucket served on its own. */
  read?(key: string): Promise<CoverImage | undefined>;
}

export const storeFailed = () => new AppError('COVER_STORE_FAILED', 'The cover image store failed', 502);

/** The type of an image by its first bytes, whatever the client declared; undefined for anything else. */
export function sniffImageType(bytes: Buffer): CoverType | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

const TYPE_OF_EXTENSION: Record<string, CoverType> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };
const KEY = /^covers\/[0-9a-f-]{36}\/[0-9a-f-]{36}\.(jpg|png|webp)$/;

/** Covers as files under `<dataDir>/covers` (the key is the path below the data directory), served at `GET /api/books/{id}/cover` through `baseUrl`. */
export class DirectoryCoverStore implements CoverStore {
  constructor(
    private readonly root: string,
    private readonly baseUrl: string,
  ) {}

  private file(key: string): string {
    if (!KEY.test(key)) throw new Error(`not a cover key: ${key}`);
    return path.join(this.root, key);
  }

  async put(key: string, image: CoverImage): Promise<void> {
    const file = this.file(key);
    try {
      await fs.mkdir(path.dirname(file), { recursive: true });
      // Written aside and renamed, so a reader never sees half a file.
      await fs.writeFile(`${file}.part`, image.bytes);
      await fs.rename(`${file}.part`, file);
    } catch {
      throw storeFailed();
    }
  }

  async remove(key: string): Promise<void> {
    await fs.rm(this.file(key), { force: true });
  }

  /** The key's file name is part of the URL, so a new cover is a new URL and caches never serve the old one. */
  url(bookId: string, key: string): string {
    return `${this.baseUrl}/api/books/${bookId}/cover?v=${path.basename(key).split('.')[0]}`;
  }

  async read(key: string): Promise<CoverImage | undefined> {
    try {
      const bytes = await fs.readFile(this.file(key));
      return { bytes, contentType: TYPE_OF_EXTENSION[key.slice(key.lastIndexOf('.') + 1)] };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }
}

type S3Settings = NonNullable<Config['covers']['s3']>;

/** Covers as objects of an S3-compatible bucket, read by browsers straight from `publicUrl`. */
export class S3CoverStore implements CoverStore {
  private readonly client: S3Client;

  constructor(private readonly settings: S3Settings) {
    this.client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
      maxAttempts: 2,
    });
  }

  async put(key: string, image: CoverImage): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.settings.bucket,
          Key: key,
          Body: image.bytes,
          ContentType: image.contentType,
          CacheControl: COVER_CACHE_CONTROL,
        }),
      );
    } catch {
      throw storeFailed();
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key }));
  }

  url(_bookId: string, key: string): string {
    return `${this.settings.publicUrl}/${key}`;
  }

  close(): void {
    this.client.destroy();
  }
}

/** A cover's bytes never change under its URL. */
export const COVER_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export function coverStoreFor(config: Pick<Config, 'covers' | 'dataDir'>): CoverStore {
  return config.covers.s3 ? new S3CoverStore(config.covers.s3) : new DirectoryCoverStore(config.dataDir, config.covers.baseUrl);
}
