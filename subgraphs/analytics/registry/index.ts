/**
 * The schema registry, a module of the analytics service (CONTRACT §13): the service already
 * serves admins their reports and keeps a database of its own, and the gateway stays thin (STYLE
 * 13: it counts and hands over, the rules and the store live here). Its tables live in the
 * analytics database; its routes are mounted under /analytics.
 */
import type { ServiceShell } from '../../../rest-compat/service';
import { REGISTRY_ENTITIES } from './entities';
import { registryAdminRoutes, registryInternalRoutes } from './routes';
import { RegistryService } from './service';

export { REGISTRY_ENTITIES };
/** How often a process deletes usage older than the retention (and once at start). */
const PRUNE_EVERY_MS = 3600_000;

export function buildRegistry({ db, logger, config }: Pick<ServiceShell, 'db' | 'logger' | 'config'>) {
  const registry = new RegistryService(db, logger, config.usage.retentionDays);
  let timer: NodeJS.Timeout | undefined;
  let pruning: Promise<void> = Promise.resolve();
  const prune = () => {
    pruning = registry.usage.prune().then(
      (deleted) => {
        if (deleted > 0) logger.info({ deleted, retentionDays: config.usage.retentionDays }, 'usage older than the retention deleted');
      },
      (error: unknown) => logger.warn({ err: error }, 'usage pruning failed; it runs again within the hour'),
    );
  };
  return {
    registry,
    adminRoutes: registryAdminRoutes(registry),
    internalRoutes: registryInternalRoutes(registry, config.internalApiKey),
    start() {
      prune();
      timer = setInterval(prune, PRUNE_EVERY_MS);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await pruning;
    },
  };
}
