/**
 * Serves the built admin UI (gateway/admin, built by `npm run build` into dist/admin) at /admin:
 * hashed assets cached for a year, index.html revalidated every time and answered for every client
 * route under /admin/*, and a 503 envelope when the UI has not been built.
 */
import fs from 'node:fs';
import path from 'node:path';
import express, { Router, type RequestHandler } from 'express';
import { serviceUnavailable } from '../platform/errors';
import { pageHeaders } from './page-policy';

export const ADMIN_PATH = '/admin';

/**
 * dist/admin beside the compiled gateway (dist/gateway/admin-static.js → dist/admin); run from the
 * TypeScript source (Jest), the same folder under the project root.
 */
export const ADMIN_DIST_DIR = path.extname(__filename) === '.ts' ? path.resolve(__dirname, '..', 'dist', 'admin') : path.resolve(__dirname, '..', 'admin');

export const ADMIN_NOT_BUILT = 'Admin UI is not built; run npm run build';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

/** A request for a file (`/admin/assets/x.js`, `/admin/favicon.ico`) rather than a client route (`/admin/users/1`). */
const looksLikeFile = (pathname: string) => pathname.startsWith('/assets/') || path.posix.extname(pathname) !== '';

export function adminStatic(dir: string = ADMIN_DIST_DIR): Router {
  const index = path.join(dir, 'index.html');
  const router = Router();

  // Checked per request, so a gateway started before `npm run build` serves the UI once it exists.
  const built: RequestHandler = (_req, _res, next) => {
    if (!fs.existsSync(index)) throw serviceUnavailable(ADMIN_NOT_BUILT, 'ADMIN_UI_NOT_BUILT');
    next();
  };

  const files = express.static(dir, {
    index: false,
    redirect: false,
    fallthrough: true,
    dotfiles: 'ignore',
    setHeaders(res, file) {
      pageHeaders(res);
      // Vite names everything under assets/ by content hash: a new build means new names.
      const hashed = path.relative(dir, file).split(path.sep)[0] === 'assets';
      res.setHeader('Cache-Control', hashed ? IMMUTABLE : REVALIDATE);
    },
  });

  // A client-side route gets index.html through the same static handler (ETag, Last-Modified, no-cache).
  const app: RequestHandler = (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || looksLikeFile(req.path)) {
      next();
      return;
    }
    req.url = '/index.html';
    files(req, res, next);
  };

  router.use(ADMIN_PATH, built, files, app);
  return router;
}
