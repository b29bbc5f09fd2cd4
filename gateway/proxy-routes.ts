/**
 * Which service a path belongs to (CONTRACT §9: the proxy table), and the routes services call on
 * each other that do not exist from outside, refused however the path is disguised.
 */
import type { ServiceName } from '../platform/config';

/** Path prefix → service. A prefix matches itself and what lies below it, never `/authors`. */
export const PROXY_TABLE: readonly { prefix: string; service: ServiceName }[] = [
  { prefix: '/auth', service: 'auth' },
  { prefix: '/api/user', service: 'user' },
  { prefix: '/api/books', service: 'book' },
  { prefix: '/api/authors', service: 'book' },
  { prefix: '/api/categories', service: 'book' },
  { prefix: '/api/publishers', service: 'book' },
  { prefix: '/api/orders', service: 'order' },
  { prefix: '/api/payments', service: 'payment' },
  { prefix: '/api/webhooks', service: 'order' },
  { prefix: '/analytics', service: 'analytics' },
];

/** Routes that services call on each other; from outside they do not exist (404). */
const INTERNAL_ONLY = ['/api/user/create', '/auth/internal', '/api/books/internal', '/analytics/internal'];

/** The path of a request target: up to `?` or `#`. */
export function pathnameOf(url: string): string {
  return url.split(/[?#]/, 1)[0];
}

/** The service a path belongs to. Case-insensitive, as the services' own routing is. */
export function upstreamFor(pathname: string): ServiceName | undefined {
  const path = pathname.toLowerCase();
  return PROXY_TABLE.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`))?.service;
}

/** `/` or segments that each start with a character other than a dot and hold only unreserved characters, with at most a trailing slash. */
const PLAIN_PATH = /^(?:\/|(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+\/?)$/;

/**
 * The path as the most lenient reader could take it: percent-decoded until nothing changes (double
 * encoding included), backslashes as slashes (`url.parse` in http-proxy does that), lower case, empty
 * segments dropped (http-proxy collapses `//`), dot segments resolved, `;params` and blanks at the
 * ends of a segment removed. Internal routes are refused on this form, so no such trick reaches them.
 */
export function canonicalPath(pathname: string): string {
  // Plain segments (no escape, backslash, parameter, blank, empty or dot segment) read the same by
  // every layer: only case and a trailing slash differ. Most paths are such; the rest take the long way.
  if (PLAIN_PATH.test(pathname)) return pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1).toLowerCase() : pathname.toLowerCase();
  let path = pathname;
  for (;;) {
    const decoded = path.replace(/%([0-9a-f]{2})/gi, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (decoded === path) break;
    path = decoded;
  }
  const segments: string[] = [];
  for (const raw of path.replace(/\\/g, '/').toLowerCase().split('/')) {
    const segment = raw.split(';', 1)[0].replace(/^[\s\u0000-\u001f\u007f]+|[\s\u0000-\u001f\u007f]+$/g, '');
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

export function isInternalOnly(pathname: string): boolean {
  const path = canonicalPath(pathname);
  return INTERNAL_ONLY.some((route) => path === route || path.startsWith(`${route}/`));
}
