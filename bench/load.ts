/**
 * HTTP load on loopback with autocannon, bounded in time: throughput and latency percentiles of
 * one route at a fixed concurrency.
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: string;
  /** Builds each request's body (e.g. a fresh checkoutId). */
  bodyFor?: () => string;
  connections: number;
  seconds: number;
  /** Every answer's body must be exactly this; the others count as `mismatches`. */
  expectBody?: string;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** Answers whose body differed from `expectBody`. */
  mismatches: number;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  if (!/^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])[:/]/.test(options.url)) throw new Error(`load tests target loopback only, not ${options.url}`);
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: options.seconds,
    ...(options.expectBody !== undefined ? { expectBody: options.expectBody } : {}),
    ...(options.bodyFor ? { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, body: options.bodyFor!() }) }] } : {}),
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    mismatches: result.mismatches,
  };
}
