/**
 * Replicas starting together on an empty MySQL database: each takes the migration lock in turn, the
 * first migrates, the others find nothing to do, and all of them come up.
 */
import { TestDatabases } from '../test/event-fixtures';
import { itIf } from '../test/skip';
import { runConfig } from '../test/stack';
import { OutboxEvent } from './events/outbox';

const databases = new TestDatabases();
afterAll(() => databases.dropAll());

itIf(runConfig.dbUrl !== undefined, 'set DB_URL to run')('migrates an empty database once when four processes open it at the same moment', async () => {
  const opened = await Promise.all([1, 2, 3, 4].map(() => databases.open('migration_race')));

  const applied = await opened[0].dataSource.query<{ name: string; times: number }[]>('SELECT name, COUNT(*) AS times FROM migrations GROUP BY name ORDER BY name');
  expect(applied.map((row) => [row.name, Number(row.times)])).toEqual([
    ['EventTables1732000000000', 1],
    ['OutboxHeaders1732000001000', 1],
    ['TestCounters1900000000000', 1],
  ]);
  for (const db of opened) expect(await db.manager.count(OutboxEvent)).toBe(0);
});
