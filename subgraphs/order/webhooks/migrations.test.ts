import { openDatabase } from '../../../platform/database';
import { dropDatabases, testConfig } from '../../../test/harness';
import { Webhooks1732000000440 } from '../migrations/1732000000440-Webhooks';
import { WebhookSecretOverlaps1732000000450 } from '../migrations/1732000000450-WebhookSecretOverlaps';
import { signingSecrets } from './dispatcher';
import { WebhookEndpoint } from './entities';

const config = testConfig();

afterAll(() => dropDatabases(config, ['order']));

/** A datetime as both databases take it in a raw statement. */
const datetime = (date: Date) => date.toISOString().replace('T', ' ').replace('Z', '');

describe('the migration to every rotated-out secret in overlap', () => {
  it('carries the one secret an endpoint had in overlap, with its end, and leaves the others with none', async () => {
    const before = await openDatabase({ service: 'order', config, entities: [], migrations: [Webhooks1732000000440] });
    const now = new Date();
    const ends = new Date(now.getTime() + 3600_000);
    const insert =
      'INSERT INTO webhook_endpoints (id, url, description, events, enabled, secret, previous_secret, previous_secret_expires_at, created_at, updated_at) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)';
    const created = datetime(now);
    await before.dataSource.query(insert, ['e1', 'https://hooks.example.com/a', '["*"]', 1, 'whsec_new', 'whsec_old', datetime(ends), created, created]);
    await before.dataSource.query(insert, ['e2', 'https://hooks.example.com/b', '["*"]', 1, 'whsec_only', null, null, created, created]);
    await before.close();

    const after = await openDatabase({ service: 'order', config, entities: [WebhookEndpoint], migrations: [Webhooks1732000000440, WebhookSecretOverlaps1732000000450] });
    try {
      const [rotated, fresh] = await after.manager.find(WebhookEndpoint, { order: { id: 'ASC' } });
      expect(rotated.previousSecrets).toEqual([{ secret: 'whsec_old', expiresAt: ends }]);
      expect(signingSecrets(rotated, now)).toEqual(['whsec_new', 'whsec_old']);
      expect(signingSecrets(rotated, new Date(ends.getTime() + 1))).toEqual(['whsec_new']);
      expect(fresh.previousSecrets).toEqual([]);
      expect(signingSecrets(fresh, now)).toEqual(['whsec_only']);
    } finally {
      await after.close();
    }
  });
});
