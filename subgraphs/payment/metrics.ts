/**
 * The payment service's figure for Prometheus beside the shell's: refunds parked FAILED, each money
 * owed to a customer until an admin retries it (docs/operations.md, "Refunds the provider refuses").
 */
import { Gauge, type Registry } from 'prom-client';
import type { Database } from '../../platform/database';
import type { Logger } from '../../platform/logger';
import { Refund } from './entities';

export function registerRefundMetrics(registry: Registry, db: Database, logger: Logger): void {
  registry.registerMetric(
    new Gauge({
      name: 'bookstore_refunds_failed',
      help: 'Refunds the provider refused, parked FAILED until an admin retries them',
      registers: [],
      // Read at scrape time from the table every replica shares; a database that does not answer
      // leaves no sample rather than a zero that would end the alert.
      async collect() {
        this.reset();
        try {
          this.set(await db.manager.count(Refund, { where: { status: 'FAILED' } }));
        } catch (error) {
          logger.debug({ err: error }, 'failed refunds not counted for the metrics');
        }
      },
    }),
  );
}
