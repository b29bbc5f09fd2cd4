/**
 * Process wiring shared by every `main.ts` and the embedded starter: configuration (failing fast
 * with the variable's name), logger, event bus, and a clean stop on SIGINT/SIGTERM.
 */
import 'reflect-metadata';
import { ConfigError, loadConfig, type Config, type LoadOptions } from './config';
import type { EventBus } from './events/bus';
import { createEventBus } from './events/create-bus';
import { namespacedBus } from './events/namespaced-bus';
import { createLogger, type Logger } from './logger';

export interface ProcessDeps {
  config: Config;
  logger: Logger;
  bus: EventBus;
}

export function processDeps(options: LoadOptions = {}): ProcessDeps {
  let config: Config;
  try {
    config = loadConfig(process.env, options);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const bus = namespacedBus(createEventBus(config, logger), config.eventNamespace);
  return { config, logger, bus };
}

/**
 * Longest a graceful stop may take before the process exits anyway: HTTP drain (10 s), consumers,
 * outbox flush (5 s), with room, and under the 30 s orchestrators usually wait before SIGKILL.
 */
export const STOP_BOUND_MS = 25_000;

/**
 * Runs `stop` once on the first SIGINT or SIGTERM, then exits 0 (1 if it failed or took longer
 * than `boundMs`); a second signal exits at once.
 */
export function stopOnSignals(logger: Logger, stop: () => Promise<void>, boundMs = STOP_BOUND_MS): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'stopping');
    setTimeout(() => {
      logger.error({ boundMs }, 'stop took too long; exiting');
      process.exit(1);
    }, boundMs).unref();
    stop().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, 'unclean stop');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** Starts one service alone, as `node dist/subgraphs/<name>/main.js` does. */
export async function runAlone(name: keyof Config['ports'], build: (deps: ProcessDeps) => Promise<{ start(port: number, host?: string): Promise<number>; stop(): Promise<void> }>): Promise<void> {
  const deps = processDeps();
  try {
    const service = await build(deps);
    await service.start(deps.config.ports[name], deps.config.bindHost);
    stopOnSignals(deps.logger, async () => {
      await service.stop();
      await deps.bus.close();
    });
  } catch (error) {
    deps.logger.fatal({ err: error }, `${name} service failed to start`);
    process.exit(1);
  }
}
