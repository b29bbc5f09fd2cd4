import type { Response } from 'express';

/**
 * The Content-Security-Policy of the pages the gateway serves itself (the admin UI, the API docs):
 * only this origin's scripts, styles and API. Both chart and docs code set styles from script, hence
 * 'unsafe-inline' for styles (never for scripts); icons come as data: images.
 */
export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/** The headers of such a page (`X-Content-Type-Options` is set for every answer by the gateway itself). */
export function pageHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', PAGE_CONTENT_SECURITY_POLICY);
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
}
