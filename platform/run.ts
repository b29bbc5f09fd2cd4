/**
 * Process wiring shared by every `main.ts` and the embedded starter: configuration (failing fast
 * with the variable's name), logger, event bus, a clean stop on SIGINT/SIGTERM, and what an error
 * nobody caught does to the process (platform/crash.ts), and tracing when it is configured
 * (platform/telemetry; its instrumentations are registered by the first import, before the modules
 * they patch are loaded).
 */
import './telemetry/register';
import 'reflect-metadata';
import cluster from 'node:cluster';
import { guardProcess, stopOnCrash } from './crash';
import { ConfigError, loadConfig, type Config, type LoadOptions } from './config';
import { MigrationLockTimeout, isDatabaseUnavailable, isDeadlock } from './database';
import type { EventBus } from './events/bus';
import { createEventBus } from './events/create-bus';
import { isRetriableKafkaError } from './events/kafka';
import { namespacedBus } from './events/namespaced-bus';
import { createLogger, type Logger } from './logger';
import { startTracing, type TracingHandle } from './telemetry/tracing';
import { superviseWorkers } from './workers';

export interface ProcessDeps {
  config: Config;
  logger: Logger;
  bus: EventBus;
}

/**
 * `service`: what the process runs, the name its spans carry; the embedded default runs every
 * service, and each reports its own.
 */
export function processDeps(options: LoadOptions & { service?: string } = {}): ProcessDeps {
  const { config, logger } = processBasics(options, options.service ?? 'bookstore');
  return { config, logger, bus: processBus(config, logger) };
}

function processBus(config: Config, logger: Logger): EventBus {
  return namespacedBus(createEventBus(config, logger), config.eventNamespace);
}

/** Tracing of this process, when configured; its last spans are exported before the process exits. */
let tracing: TracingHandle | undefined;

function processBasics(options: LoadOptions, service: string): { config: Config; logger: Logger } {
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
  guardProcess(logger);
  tracing = startTracing({ config: config.tracing, service, perService: options.embedded });
  if (tracing) {
    const { exporter, sampler, ratio } = config.tracing;
    logger.info({ exporter: exporter?.kind, endpoint: exporter?.endpoint, sampler, ratio }, 'tracing on');
  }
  return { config, logger };
}

/**
 * Longest a graceful stop may take before the process exits anyway: HTTP drain (10 s), consumers,
 * outbox flush (5 s), with room, and under the 30 s orchestrators usually wait before SIGKILL.
 */
export const STOP_BOUND_MS = 25_000;

/**
 * Runs `stop` once on the first SIGINT or SIGTERM, then exits 0 (1 if it failed or took longer
 * than `boundMs`); a second signal exits at once. An uncaught exception stops the same way, exiting 1.
 */
export function stopOnSignals(logger: Logger, stop: () => Promise<void>, boundMs = STOP_BOUND_MS): void {
  let stopping = false;
  const stopThenExit = (exitCode: number) => {
    stopping = true;
    setTimeout(() => {
      logger.error({ boundMs }, 'stop took too long; exiting');
      process.exit(1);
    }, boundMs).unref();
    stop()
      .then(() => tracing?.shutdown().catch(() => undefined))
      .then(
        () => process.exit(exitCode),
        (error: unknown) => {
          logger.error({ err: error }, 'unclean stop');
          process.exit(1);
        },
      );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    logger.info({ signal }, 'stopping');
    stopThenExit(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A second uncaught exception while stopping is logged and the stop goes on, bounded all the same.
  stopOnCrash(() => {
    if (!stopping) stopThenExit(1);
  });
}

/**
 * True for a start that failed because a neighbour is not ready yet: the database refusing
 * connections, the broker still electing leaders or loading a group coordinator, topics created a
 * moment ago by another service. Anything else (bad configuration, a broken migration) is fatal at once.
 */
export function isRetriableStartupError(error: unknown): boolean {
  return error instanceof MigrationLockTimeout || isDatabaseUnavailable(error) || isDeadlock(error) || isRetriableKafkaError(error);
}

const STARTUP_BACKOFF_MS = { initial: 250, max: 5000 };

/**
 * Starts one service alone, as `node dist/subgraphs/<name>/main.js` does (or, when `workers` gives
 * more than one, a primary that runs that many processes of it: platform/workers.ts). A start that fails for a
 * passing reason (see isRetriableStartupError) is undone (service stopped, bus closed) and tried
 * again with a growing pause, logged at warn, until `STARTUP_TIMEOUT_MS` has passed; only then, or
 * at once for any other error, the process exits 1.
 */
export async function runAlone(
  name: keyof Config['ports'],
  build: (deps: ProcessDeps) => Promise<{ start(port: number, host?: string): Promise<number>; stop(): Promise<void> }>,
  options: { workers?: (config: Config) => number } = {},
): Promise<void> {
  const { config, logger } = processBasics({}, name);
  const workers = options.workers?.(config) ?? 1;
  if (workers > 1 && cluster.isPrimary) {
    superviseWorkers({ name, count: workers, logger, stopBoundMs: STOP_BOUND_MS });
    return;
  }
  const deadline = Date.now() + config.startupTimeoutMs;
  let delayMs = STARTUP_BACKOFF_MS.initial;
  for (let attempt = 1; ; attempt += 1) {
    const bus = processBus(config, logger);
    let service: { start(port: number, host?: string): Promise<number>; stop(): Promise<void> } | undefined;
    try {
      service = await build({ config, logger, bus });
      await service.start(config.ports[name], config.bindHost);
      const started = service;
      stopOnSignals(logger, async () => {
        await started.stop();
        await bus.close();
      });
      return;
    } catch (error) {
      await service?.stop().catch(() => undefined);
      await bus.close().catch(() => undefined);
      if (!isRetriableStartupError(error) || Date.now() + delayMs > deadline) {
        logger.fatal({ err: error, attempts: attempt }, `${name} service failed to start`);
        process.exit(1);
      }
      logger.warn({ err: error, attempt, retryInMs: delayMs }, `${name} service could not start yet; retrying`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      delayMs = Math.min(delayMs * 2, STARTUP_BACKOFF_MS.max);
    }
  }
}
