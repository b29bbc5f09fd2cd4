/**
 * The system under test: all six services (startStack), the gateway in front of them, the webhook
 * gate between the simulator and the payment service, the workload's catalogue, and a log that keeps
 * every error-level line. `restart` stops a service and builds it again on the same database and bus.
 */
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../platform/logger';
import type { ServiceName } from '../../platform/config';
import { SERVICE_FACTORIES } from '../../subgraphs';
import { createBook } from '../commerce';
import { startGateway, type RunningGateway } from '../gateway';
import { adminSession, startStack, WEBHOOK_SECRET, type Stack } from '../stack';
import type { Workload } from './generator';
import { GroundTruth } from './truth';
import { WebhookGate } from './webhook-gate';

/** How long a checkout holds its copies in the workload. */
export const HOLD_MS = 3_000;

export interface World {
  stack: Stack;
  gateway: RunningGateway;
  gate: WebhookGate;
  /** The URLs the gateway proxies to: the real payment service, where the simulator's webhooks go through the gate. */
  gatewayUrls: Record<ServiceName, string>;
  simulatorUrl: string;
  adminBearer: string;
  truth: GroundTruth;
  /** Log lines at pino level 50 (error) or above. */
  errorLines: string[];
  /** Set while a service restarts: the gateway's 503 for it is then the contract's answer. */
  restarting: boolean;
  restart(service: ServiceName): Promise<void>;
  stop(): Promise<void>;
}

function errorLog(lines: string[]): Logger {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line && (JSON.parse(line) as { level: number }).level >= 50) lines.push(line);
      }
      done();
    },
  });
  return createLogger('warn', {}, stream);
}

export async function startWorld(workload: Workload): Promise<World> {
  const errorLines: string[] = [];
  const logger = errorLog(errorLines);
  // Holds of three seconds expire within a run, so pays race the expiry sweep.
  const stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'], logger, env: { STOCK_HOLD_MINUTES: String(HOLD_MS / 60_000) } });
  const gatewayConfig = { ...stack.config, urls: { ...stack.config.urls } };
  const gate = new WebhookGate(() => gatewayConfig.urls.payment, WEBHOOK_SECRET);
  let gateway: RunningGateway | undefined;
  try {
    // Only the simulator's webhooks read config.urls.payment; clients reach the payment service through the gateway.
    stack.config.urls.payment = await gate.start();
    gateway = await startGateway(gatewayConfig, { logger });
    const admin = await adminSession(stack);
    const truth = new GroundTruth();
    truth.books = await Promise.all(
      workload.books.map(async (plan, index) => ({
        id: (await createBook(stack, admin.bearer, `Invariant book ${index}`, plan.price, plan.stock)).id,
        price: plan.price,
        initialStock: plan.stock,
        adminChanged: false,
      })),
    );
    const world: World = {
      stack,
      gateway,
      gate,
      gatewayUrls: gatewayConfig.urls,
      simulatorUrl: stack.config.stripe.apiUrl as string,
      adminBearer: admin.bearer,
      truth,
      errorLines,
      restarting: false,
      async restart(name) {
        world.restarting = true;
        try {
          await stack.services[name]?.stop();
          const service = await SERVICE_FACTORIES[name]!({ config: stack.config, logger, bus: stack.bus });
          stack.services[name] = service;
          const url = `http://127.0.0.1:${await service.start(0, '127.0.0.1')}`;
          gatewayConfig.urls[name] = url;
          if (name !== 'payment') stack.config.urls[name] = url;
          truth.faults.restarts += 1;
        } finally {
          world.restarting = false;
        }
      },
      async stop() {
        await gateway?.stop();
        await gate.stop();
        await stack.stop();
      },
    };
    return world;
  } catch (error) {
    await gateway?.stop();
    await gate.stop();
    await stack.stop();
    throw error;
  }
}
