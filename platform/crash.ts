/**
 * What a process does with an error nobody caught. Every process starts through platform/run.ts
 * (each service's main.ts, the gateway's, the embedded all-in-one of scripts/start.ts), which installs
 * this once. Both handlers run in the async context of the work that failed, so the line the logger
 * writes carries its `requestId` (or `eventId`) when there was one.
 *
 * - An uncaught exception is logged at fatal, then the process stops as on SIGTERM (servers drained,
 *   consumers and the outbox stopped, within STOP_BOUND_MS) and exits 1; before the stop is wired
 *   (still starting) it exits 1 at once. After one, Node's state is unknown (a handler stopped half-way
 *   may hold a transaction, a lock, an open stream), so the process does not go on serving: its
 *   supervisor (a restart policy, the orchestrator, whoever ran `npm start`) starts a fresh one. The log
 *   line is flushed on exit (pino's exit hook).
 * - An unhandled rejection is logged at error and the process keeps running: the rejected promise's own
 *   work has already unwound, and Node's default (an uncaught exception) would take down every service
 *   of the embedded process for one forgotten `await`.
 */
import type { Logger } from './logger';

let installed = false;
let stopAfterCrash: (() => void) | undefined;

/** Installs the two handlers, once per process, logging through `logger`. */
export function guardProcess(logger: Logger): void {
  if (installed) return;
  installed = true;
  process.on('uncaughtException', (error, origin) => {
    logger.fatal({ err: error, origin }, 'uncaught exception; stopping the process');
    if (stopAfterCrash) stopAfterCrash();
    else process.exit(1);
  });
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection');
  });
}

/** How the process stops gracefully after an uncaught exception (platform/run.ts's signal handling); `stop` exits 1 when done. */
export function stopOnCrash(stop: () => void): void {
  stopAfterCrash = stop;
}
