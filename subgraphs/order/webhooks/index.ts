/**
 * Outbound webhooks, a module of the order service: most events it sends are the order's own or
 * the payment's that the order service already consumes, and it needs no seventh process. Its
 * tables live in the order database; its routes are mounted at /api/webhooks.
 */
import type { Registry } from 'prom-client';
import type { ServiceShell } from '../../../rest-compat/service';
import { Dispatcher } from './dispatcher';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './entities';
import { webhookConsumer } from './events';
import { webhookRoutes } from './routes';
import { WebhookService } from './service';

export const WEBHOOK_ENTITIES = [WebhookEndpoint, WebhookDelivery, WebhookAttempt];
export const WEBHOOKS_PATH = '/api/webhooks';

export function buildWebhooks(shell: ServiceShell) {
  const dispatcher = new Dispatcher(shell.db, shell.logger, shell.config.webhooks);
  const webhooks = new WebhookService(shell.db, dispatcher, shell.config.webhooks);
  return {
    webhooks,
    routes: webhookRoutes(webhooks, shell.verifier),
    consumer: () => webhookConsumer(shell),
    registerMetrics: (registry: Registry) => dispatcher.registerMetrics(registry),
    start: () => dispatcher.start(),
    stop: () => dispatcher.stop(),
  };
}
