/**
 * A service as its own process, started the way `node dist/subgraphs/<name>/main.js` starts it, but
 * from the TypeScript sources (register-ts.js transpiles them on load), so tests that signal or kill
 * a real process test the code as it is now rather than whatever `npm run build` last produced.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ServiceName } from '../../platform/config';
import { freePorts } from '../event-fixtures';
import { waitFor } from '../wait';

const REPO = path.resolve(__dirname, '../..');
/** How much of a process's output is kept (its last lines), for the tests that read it. */
const OUTPUT_KEPT = 100_000;
/** How much of it a start-up failure quotes. */
const OUTPUT_IN_ERRORS = 8_000;

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  /** Resolves when the process has exited, with its exit code (null when a signal ended it). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The end of what it wrote, for failure messages. */
  output(): string;
}

export interface SpawnOptions {
  /** Run `dist/<…>/main.js` as built by `npm run build` instead of the TypeScript sources. */
  built?: boolean;
  /** The port to listen on; default a free one. */
  port?: number;
  /** Another entry point than the service's main.ts, relative to the repository (a test fixture). */
  main?: string;
  /** Called once the process is spawned, before it is healthy (to watch its output while it starts). */
  spawned?: (service: ServiceProcess) => void;
}

/**
 * Spawns `subgraphs/<name>/main.ts` (or the gateway's) listening on a free loopback port with `env`
 * (and nothing else from the test's environment but PATH), and resolves once its health check answers 200.
 */
export async function spawnService(name: ServiceName | 'gateway', env: Record<string, string>, readyTimeoutMs = 60_000, options: SpawnOptions = {}): Promise<ServiceProcess> {
  const port = options.port ?? (await freePorts(1))[0];
  const main = options.main ?? (name === 'gateway' ? 'gateway/main' : `subgraphs/${name}/main`);
  const args = options.built ? [path.join(REPO, 'dist', `${main}.js`)] : ['-r', path.join(REPO, 'test/faults/register-ts.js'), path.join(REPO, `${main}.ts`)];
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', BIND_HOST: '127.0.0.1', ...env, [`${name.toUpperCase()}_PORT`]: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The last OUTPUT_KEPT characters, cut at a line boundary so that every line kept is whole.
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > OUTPUT_KEPT) {
      const lineStart = output.indexOf('\n', output.length - OUTPUT_KEPT) + 1;
      output = output.slice(lineStart > 0 ? lineStart : output.length - OUTPUT_KEPT);
    }
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${port}`;
  const service: ServiceProcess = { child, port, url, exited, output: () => output };
  options.spawned?.(service);
  const healthy = waitFor(async () => (await fetch(`${url}/actuator/health`, { signal: AbortSignal.timeout(2000) })).status === 200, {
    what: `the ${name} process to be healthy`,
    timeoutMs: readyTimeoutMs,
    intervalMs: 100,
  });
  const lastLines = () => output.slice(-OUTPUT_IN_ERRORS);
  const died = exited.then(({ code, signal }) => Promise.reject(new Error(`the ${name} process exited early (${code ?? signal}): ${lastLines()}`)));
  try {
    await Promise.race([healthy, died]);
  } catch (error) {
    child.kill('SIGKILL');
    if (child.exitCode === null && error instanceof Error) error.message += `; its last output:\n${lastLines()}`;
    throw error;
  } finally {
    died.catch(() => undefined);
    healthy.catch(() => undefined);
  }
  return service;
}

/** `work`, or a rejection naming `what` once `ms` passed. */
export async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
