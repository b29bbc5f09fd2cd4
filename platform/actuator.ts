/**
 * The actuator routes every service and the gateway answer (CONTRACT §1): `/actuator/health` from
 * named checks, `/actuator/info`, and `/actuator/prometheus` from the process's metrics registry (all
 * the workers' together, when the process is one of several: platform/workers.ts).
 */
import { Router, type RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import { metricsOf } from './workers';

/** Resolves when the dependency is fine; rejects with the reason it is not. */
export type HealthCheck = () => Promise<void>;

export interface ActuatorOptions {
  name: string;
  description: string;
  /** Named dependency checks; health is UP only when every one resolves. */
  health: Record<string, HealthCheck>;
  registry: Registry;
  /**
   * The answer to a method these routes do not serve: the app's 405 (with Allow), like every other
   * route's. Handed in, as the error envelope belongs to the layer above.
   */
  otherMethods: RequestHandler;
}

type Component = { status: 'UP' } | { status: 'DOWN'; error: string };

async function component(check: HealthCheck): Promise<Component> {
  try {
    await check();
    return { status: 'UP' };
  } catch (error) {
    return { status: 'DOWN', error: error instanceof Error ? error.message : String(error) };
  }
}

export function actuatorRouter(options: ActuatorOptions): Router {
  const router = Router();
  const metrics = metricsOf(options.registry);
  router
    .route('/actuator/health')
    .get(async (_req, res) => {
      const components = Object.fromEntries(await Promise.all(Object.entries(options.health).map(async ([name, check]) => [name, await component(check)] as const)));
      const up = Object.values(components).every((c) => c.status === 'UP');
      res.status(up ? 200 : 503).json({ status: up ? 'UP' : 'DOWN', components });
    })
    .all(options.otherMethods);
  router
    .route('/actuator/info')
    .get((_req, res) => {
      res.json({ app: { name: options.name, description: options.description }, node: process.version });
    })
    .all(options.otherMethods);
  router
    .route('/actuator/prometheus')
    .get(async (_req, res) => {
      res.type(options.registry.contentType).send(await metrics());
    })
    .all(options.otherMethods);
  return router;
}
