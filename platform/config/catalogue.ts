/** The book service's settings: where covers are kept and served from, the demo catalogue, stock holds. */
import { ConfigError, type EnvReader } from './env';

export interface CatalogueConfig {
  /** Where book covers are kept (CONTRACT §4). */
  covers: {
    /** Scheme, host and port that locally stored covers are served under (`COVER_BASE_URL`); the gateway's by default. */
    baseUrl: string;
    /** Set when `S3_BUCKET` is: covers go to an S3-compatible bucket instead of `<dataDir>/covers`. */
    s3:
      | {
          bucket: string;
          /** `S3_ENDPOINT`: MinIO or another S3-compatible store (addressed path-style); unset means AWS. */
          endpoint: string | undefined;
          /** `S3_REGION`, default us-east-1. Credentials come from the SDK's default chain (AWS_ACCESS_KEY_ID, ...). */
          region: string;
          /** `S3_PUBLIC_URL`: the base of the URLs written into `coverImageUrl` (default: the endpoint and bucket). */
          publicUrl: string;
        }
      | undefined;
  };
  /** `BOOK_STOCK_LOW_THRESHOLD` (default 5): a sale or an admin's change that takes a tracked book's stock from above this to at or below it publishes `book-stock-low`. */
  stockLowThreshold: number;
  /** Fill an empty book catalogue with a dozen demo books at start (`SEED_DEMO_CATALOGUE`). */
  seedDemoCatalogue: boolean;
  /** How checkouts hold a tracked book's copies until they are paid (CONTRACT §4, book/inventory.ts). */
  stockHolds: StockHoldSettings;
}

export interface StockHoldSettings {
  /** `STOCK_HOLD_MINUTES` (default 15, fractions allowed): how long a checkout holds its copies. */
  minutes: number;
  /** `STOCK_HOLD_MAX_PER_BOOK` (default 10): copies of one book a customer may hold at once. */
  maxPerBook: number;
  /** `STOCK_HOLD_MAX_COPIES` (default 50): copies a customer may hold at once, all books together. */
  maxCopies: number;
}

function holdMinutes(env: EnvReader): number {
  const raw = env.read('STOCK_HOLD_MINUTES');
  if (raw === undefined) return 15;
  const minutes = Number(raw);
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60)
    throw new ConfigError(`STOCK_HOLD_MINUTES must be a number of minutes above 0 and at most 1440, got "${raw}"`);
  return minutes;
}

export function readCatalogue(env: EnvReader, gatewayPort: number): CatalogueConfig {
  const baseUrl = (env.read('COVER_BASE_URL') ?? `http://localhost:${gatewayPort}`).replace(/\/$/, '');
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(baseUrl)) throw new ConfigError(`COVER_BASE_URL must be an http(s) URL, got "${baseUrl}"`);
  const bucket = env.read('S3_BUCKET');
  const endpoint = env.read('S3_ENDPOINT')?.replace(/\/$/, '');
  if (endpoint !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(endpoint))
    throw new ConfigError(`S3_ENDPOINT must be a scheme, host and port such as http://127.0.0.1:9000, got "${endpoint}"`);
  const region = env.read('S3_REGION') ?? 'us-east-1';
  const s3 = bucket
    ? {
        bucket,
        endpoint,
        region,
        publicUrl: (env.read('S3_PUBLIC_URL') ?? (endpoint ? `${endpoint}/${bucket}` : `https://${bucket}.s3.${region}.amazonaws.com`)).replace(/\/$/, ''),
      }
    : undefined;
  return {
    covers: { baseUrl, s3 },
    stockLowThreshold: env.int('BOOK_STOCK_LOW_THRESHOLD', 5, 0),
    seedDemoCatalogue: (env.read('SEED_DEMO_CATALOGUE') ?? (env.embedded ? 'true' : 'false')) === 'true',
    stockHolds: { minutes: holdMinutes(env), maxPerBook: env.int('STOCK_HOLD_MAX_PER_BOOK', 10, 1), maxCopies: env.int('STOCK_HOLD_MAX_COPIES', 50, 1) },
  };
}
