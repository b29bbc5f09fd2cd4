/**
 * One process on every core (`GATEWAY_WORKERS`, CONTRACT §9): a primary that forks the workers,
 * which share its listening port through node:cluster (connections handed out round-robin), and
 * answers for them as one process would.
 *
 * - A worker that fails to start ends the whole: the primary stops the others and exits 1, as a
 *   single process that could not start does (its own start already waited out passing failures,
 *   platform/run.ts).
 * - A worker that dies once serving is replaced, after a pause that grows while they keep dying.
 * - SIGTERM or SIGINT is passed to every worker, each drains as a single process does, and the
 *   primary exits when they all have (1 if one did not stop cleanly or in time).
 * - `/actuator/prometheus` on any worker answers for all of them: the worker asks the primary,
 *   which gathers every worker's registry and sums them (prom-client's AggregatorRegistry).
 */
import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Logger } from './logger';

/** What the primary tells each worker it forks: it gathers their metrics (another cluster's primary, such as a process manager's, does not). */
const SUPERVISED = 'bookstore:supervised';
const METRICS_ASKED = 'bookstore:metrics-asked';
const METRICS_ANSWERED = 'bookstore:metrics-answered';
const METRICS_TIMEOUT_MS = 5000;
const REPLACE_BACKOFF_MS = { initial: 250, max: 10_000 };
/** A worker that served this long resets the pause before the next replacement. */
const STABLE_MS = 60_000;

interface MetricsAsked {
  type: typeof METRICS_ASKED;
  id: string;
}
interface MetricsAnswered {
  type: typeof METRICS_ANSWERED;
  id: string;
  text?: string;
  error?: string;
}

let supervised = false;
if (cluster.isWorker) {
  process.on('message', (message: unknown) => {
    if (isMessage(message, SUPERVISED)) supervised = true;
  });
}

/**
 * Forks `count` workers of this same script and supervises them until a signal stops them all.
 * `stopBoundMs`: how long the workers get to drain before they are killed.
 */
export function superviseWorkers(options: { name: string; count: number; logger: Logger; stopBoundMs: number }): void {
  const { name, count, logger, stopBoundMs } = options;
  const log = logger.child({ primary: name });
  const aggregator = new AggregatorRegistry();
  const serving = new Set<Worker>();
  let stopping = false;
  let backoffMs = REPLACE_BACKOFF_MS.initial;

  const answerMetrics = (worker: Worker, message: unknown) => {
    if (!isMessage<MetricsAsked>(message, METRICS_ASKED)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS_ANSWERED, id: message.id, text } satisfies MetricsAnswered),
      (error: unknown) => worker.send({ type: METRICS_ANSWERED, id: message.id, error: String(error) } satisfies MetricsAnswered),
    );
  };

  const fork = () => {
    const worker = cluster.fork();
    let listeningAt = 0;
    worker.once('online', () => worker.send({ type: SUPERVISED }));
    worker.on('message', (message: unknown) => answerMetrics(worker, message));
    worker.once('listening', () => {
      listeningAt = Date.now();
      serving.add(worker);
      if (serving.size === count && !stopping) log.info({ workers: count }, `${name}: every worker is serving`);
    });
    worker.once('exit', (code, signal) => {
      serving.delete(worker);
      if (stopping) return;
      if (listeningAt === 0) {
        log.fatal({ worker: worker.id, code, signal }, `${name}: a worker failed to start; stopping the others`);
        stopAll(1);
        return;
      }
      backoffMs = Date.now() - listeningAt > STABLE_MS ? REPLACE_BACKOFF_MS.initial : Math.min(backoffMs * 2, REPLACE_BACKOFF_MS.max);
      log.error({ worker: worker.id, code, signal, replaceInMs: backoffMs }, `${name}: a worker died; replacing it`);
      setTimeout(() => {
        if (!stopping) fork();
      }, backoffMs).unref();
    });
  };

  const stopAll = (exitCode: number) => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    const bound = setTimeout(() => {
      log.error({ stopBoundMs }, `${name}: workers did not stop in time; killing them`);
      for (const worker of workers) worker.process.kill('SIGKILL');
      process.exit(1);
    }, stopBoundMs + 2000);
    bound.unref();
    let unclean = exitCode;
    let left = workers.length;
    if (left === 0) process.exit(exitCode);
    for (const worker of workers) {
      // A worker still starting has no handler of its own yet: the SIGTERM ends it, with nothing to drain.
      worker.once('exit', (code, signal) => {
        if (code !== 0 && signal !== 'SIGTERM') {
          unclean = 1;
          log.error({ worker: worker.id, code, signal }, `${name}: a worker did not stop cleanly`);
        }
        left -= 1;
        if (left === 0) process.exit(unclean);
      });
      worker.process.kill('SIGTERM');
    }
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }
    log.info({ signal }, `${name}: stopping every worker`);
    stopAll(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  log.info({ workers: count }, `${name}: starting workers`);
  for (let i = 0; i < count; i += 1) fork();
}

/**
 * What `/actuator/prometheus` answers: the registry's own metrics, or in a worker, the sum over
 * every worker, gathered by the primary. Every worker's registry takes part in that sum.
 */
export function metricsOf(registry: Registry): () => Promise<string> {
  if (!cluster.isWorker) return () => registry.metrics();
  // Constructed, it answers the primary's requests for this worker's registries (prom-client listens only then).
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  const pending = new Map<string, { resolve(text: string): void; reject(error: Error): void }>();
  process.on('message', (message: unknown) => {
    if (!isMessage<MetricsAnswered>(message, METRICS_ANSWERED)) return;
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.text !== undefined) waiting?.resolve(message.text);
    else waiting?.reject(new Error(`the primary could not gather the workers' metrics: ${message.error}`));
  });
  return () => {
    if (!supervised) return registry.metrics();
    return new Promise<string>((resolve, reject) => {
      const id = randomUUID();
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the primary did not answer for the workers' metrics within ${METRICS_TIMEOUT_MS} ms`));
      }, METRICS_TIMEOUT_MS);
      const settle = () => clearTimeout(timer);
      pending.set(id, {
        resolve: (text) => {
          settle();
          resolve(text);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      process.send?.({ type: METRICS_ASKED, id } satisfies MetricsAsked);
    });
  };
}

function isMessage<T extends { type: string } = { type: string }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}
