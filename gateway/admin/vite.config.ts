/**
 * Builds the admin UI into dist/admin, which the gateway serves at /admin (gateway/admin-static.ts).
 *
 * Bundle size: Preact (about 5 kB gzipped, hooks included) instead of React + ReactDOM (about
 * 45 kB), and uPlot (about 20 kB) instead of Chart.js (about 65 kB) or Recharts (over 100 kB with
 * its D3 parts): the whole app is about 42 kB gzipped (JS 39 kB, CSS 3 kB), so an admin on a phone
 * gets the dashboard at once. No router or data library: the app has five pages and one endpoint.
 * uPlot draws the time series we need (days, months) on canvas; each chart also renders its data
 * as a table for screen readers and tests.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/admin/',
  // Preact's automatic JSX runtime, without a framework plugin.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/admin', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Hashed file names under assets/: the gateway caches them for a year and index.html not at all.
    assetsDir: 'assets',
    reportCompressedSize: true,
  },
});
