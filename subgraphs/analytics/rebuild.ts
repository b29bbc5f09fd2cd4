/**
 * `npm run analytics:rebuild`: recomputes the daily and per-book aggregates from the per-payment
 * facts, for when a formula changes. Safe to run while the service runs (one transaction).
 */
import 'reflect-metadata';
import { loadConfig } from '../../platform/config';
import { rebuildAggregates } from './ingest';
import { analyticsDatabase } from './index';

async function main(): Promise<void> {
  const config = loadConfig();
  const db = await analyticsDatabase(config);
  try {
    const began = Date.now();
    const { facts } = await db.transaction((manager) => rebuildAggregates(manager, db.kind));
    process.stdout.write(`Rebuilt the analytics aggregates from ${facts} payment facts in ${Date.now() - began} ms (${db.name}).\n`);
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
