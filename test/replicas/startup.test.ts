/**
 * A replica started before its broker (a pod scheduled ahead of Kafka, compose starting everything
 * at once) waits for it: its start is retried, at warn, until STARTUP_TIMEOUT_MS, and it comes up
 * healthy once the broker answers, with no restart from outside.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePorts } from '../event-fixtures';
import { FULL_INFRASTRUCTURE, OwnBroker } from '../faults/infra';
import { spawnService, type ServiceProcess } from '../faults/process';
import { describeIf } from '../skip';
import { dropDatabases } from '../stack';
import { waitFor } from '../wait';

jest.setTimeout(300_000);

const RETRY_LINE = 'order service could not start yet; retrying';

describeIf(FULL_INFRASTRUCTURE, 'a service started before its Kafka broker', 'set KAFKA_BROKERS and DB_URL to run', () => {
  const prefix = `t${randomBytes(4).toString('hex')}_`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bookstore-startup-'));
  let broker: OwnBroker | undefined;
  let order: ServiceProcess | undefined;

  afterAll(async () => {
    order?.child.kill('SIGKILL');
    await order?.exited;
    await broker?.destroy();
    await dropDatabases({ dbUrl: process.env.DB_URL, dbPrefix: prefix, dataDir }, ['order']);
  });

  it('retries its start at warn until the broker answers, then serves', async () => {
    const [kafkaPort] = await freePorts(1);
    const env = {
      DB_URL: process.env.DB_URL ?? '',
      DB_PREFIX: prefix,
      KAFKA_BROKERS: `127.0.0.1:${kafkaPort}`,
      INTERNAL_API_KEY: 'startup-internal-key',
      DATA_DIR: dataDir,
      STARTUP_TIMEOUT_MS: '240000',
    };
    let spawned: ServiceProcess | undefined;
    const starting = spawnService('order', env, 240_000, { built: true, spawned: (service) => (spawned = service) });
    starting.catch(() => undefined);
    // The broker comes up only once a whole start attempt has failed for want of it.
    await waitFor(() => spawned?.output().includes(RETRY_LINE), { what: 'a start attempt to fail for want of the broker', timeoutMs: 120_000, intervalMs: 100 });
    broker = await OwnBroker.start({ port: kafkaPort });
    order = await starting;

    expect(order.child.exitCode).toBeNull();
    const health = await fetch(`${order.url}/actuator/health`);
    expect(health.status).toBe(200);
    const retries = order
      .output()
      .split('\n')
      .filter((line) => line.includes(RETRY_LINE))
      .map((line) => JSON.parse(line) as { level: number; attempt: number });
    expect(retries.length).toBeGreaterThan(0);
    expect(retries.every((entry) => entry.level === 40)).toBe(true);
  });
});
