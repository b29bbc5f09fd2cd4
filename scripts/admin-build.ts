/**
 * Whether the admin UI's build in dist/admin is current: newer than every one of its sources. The
 * admin UI's tests and `npm run dev` build it again only when it is not.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ADMIN_DIST_DIR } from '../gateway/admin-static';

// From the TypeScript source (the tests) or from dist/scripts (npm run dev).
const ROOT = path.extname(__filename) === '.ts' ? path.resolve(__dirname, '..') : path.resolve(__dirname, '..', '..');
const SOURCES = path.join(ROOT, 'gateway', 'admin');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

export function adminBuildIsFresh(): boolean {
  const index = path.join(ADMIN_DIST_DIR, 'index.html');
  return fs.existsSync(index) && fs.statSync(index).mtimeMs >= newestMtime(SOURCES);
}
