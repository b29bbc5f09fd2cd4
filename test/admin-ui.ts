/**
 * For the admin UI's browser tests: the built UI (rebuilt by `npm run build:admin` when missing or
 * older than its sources, so a test never drives a stale bundle) and headless Chromium from
 * Debian's `chromium` package, launched with a fresh profile.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { adminBuildIsFresh } from '../scripts/admin-build';

const ROOT = path.resolve(__dirname, '..');
export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS_DIR = path.join(ROOT, 'test-results', 'screenshots');

/** Held while one test file builds the UI; one older than a build may take was left by a killed run. */
const BUILD_LOCK = path.join(ROOT, 'dist', '.admin-build.lock');
const BUILD_TIMEOUT_MS = 120_000;

/**
 * Builds the UI into dist/admin unless the build there is newer than every source file. The admin
 * UI's test files run in parallel and may find the build stale together: one builds, the others
 * wait for it (a second build would empty dist/admin under the first file's pages).
 */
export async function ensureAdminBuilt(): Promise<void> {
  if (adminBuildIsFresh()) return;
  fs.mkdirSync(path.dirname(BUILD_LOCK), { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(BUILD_LOCK);
      break;
    } catch {
      const heldSince = fs.statSync(BUILD_LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - heldSince > BUILD_TIMEOUT_MS) fs.rmSync(BUILD_LOCK, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    if (!adminBuildIsFresh()) execFileSync('npm', ['run', '--silent', 'build:admin'], { cwd: ROOT, stdio: 'pipe', timeout: BUILD_TIMEOUT_MS });
  } finally {
    fs.rmSync(BUILD_LOCK, { recursive: true, force: true });
  }
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Chromium headless in a throwaway profile: no sync, no update checks, no background traffic. */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y --no-install-recommends chromium); .ci/run does`);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-ui-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
    locale: 'en-US',
    // Far from UTC on purpose: the dashboard's days are UTC days whatever the admin's clock says.
    timezoneId: 'Pacific/Kiritimati',
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
