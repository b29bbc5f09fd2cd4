/** The book service's settings: where covers are kept and served from, and the demo catalogue. */
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
  };
}
