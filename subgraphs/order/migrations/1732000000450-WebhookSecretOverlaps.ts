import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/** A date column as a raw query reads it: a Date from MySQL, `yyyy-MM-dd HH:mm:ss.SSS` (UTC) from SQLite. */
const dateOf = (value: Date | string) => (value instanceof Date ? value : new Date(`${value.replace(' ', 'T')}Z`));

/**
 * Every secret a rotation replaced keeps signing until its own overlap ends (CONTRACT §11): the one
 * `previous_secret` (with its end) becomes `previous_secrets`, a JSON array of `{ secret, expiresAt }`,
 * the secret an endpoint had in overlap carried into it.
 */
export class WebhookSecretOverlaps1732000000450 implements MigrationInterface {
  name = 'WebhookSecretOverlaps1732000000450';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('webhook_endpoints', new TableColumn({ name: 'previous_secrets', type: 'varchar', length: '1000', default: "'[]'" }));
    const rows = (await queryRunner.query(
      'SELECT id, previous_secret AS secret, previous_secret_expires_at AS expiresAt FROM webhook_endpoints WHERE previous_secret IS NOT NULL AND previous_secret_expires_at IS NOT NULL',
    )) as { id: string; secret: string; expiresAt: Date | string }[];
    for (const row of rows) {
      const retired = [{ secret: row.secret, expiresAt: dateOf(row.expiresAt).toISOString() }];
      await queryRunner.query('UPDATE webhook_endpoints SET previous_secrets = ? WHERE id = ?', [JSON.stringify(retired), row.id]);
    }
    await queryRunner.dropColumn('webhook_endpoints', 'previous_secret');
    await queryRunner.dropColumn('webhook_endpoints', 'previous_secret_expires_at');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('webhook_endpoints', [
      new TableColumn({ name: 'previous_secret', type: 'varchar', length: '100', isNullable: true }),
      new TableColumn({ name: 'previous_secret_expires_at', type: 'datetime', precision: 3, isNullable: true }),
    ]);
    const rows = (await queryRunner.query("SELECT id, previous_secrets AS secrets FROM webhook_endpoints WHERE previous_secrets <> '[]'")) as { id: string; secrets: string }[];
    for (const row of rows) {
      // The newest earlier secret: one column holds one.
      const [newest] = JSON.parse(row.secrets) as { secret: string; expiresAt: string }[];
      const expiresAt = newest && new Date(newest.expiresAt).toISOString().replace('T', ' ').replace('Z', '');
      if (newest) await queryRunner.query('UPDATE webhook_endpoints SET previous_secret = ?, previous_secret_expires_at = ? WHERE id = ?', [newest.secret, expiresAt, row.id]);
    }
    await queryRunner.dropColumn('webhook_endpoints', 'previous_secrets');
  }
}
