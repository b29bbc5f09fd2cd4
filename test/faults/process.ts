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

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  /** Resolves when the process has exited, with its exit code (null when a signal ended it). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The end of what it wrote, for failure messages. */
  output(): string;
}

/**
 * Spawns `subgraphs/<name>/main.ts` listening on a free loopback port with `env` (and nothing else
 * from the test's environment but PATH), and resolves once its health check answers 200.
 */
export async function spawnService(name: ServiceName, env: Record<string, string>, readyTimeoutMs = 60_000): Promise<ServiceProcess> {
  const [port] = await freePorts(1);
  const child = spawn(process.execPath, ['-r', path.join(REPO, 'test/faults/register-ts.js'), path.join(REPO, `subgraphs/${name}/main.ts`)], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', BIND_HOST: '127.0.0.1', ...env, [`${name.toUpperCase()}_PORT`]: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${port}`;
  const service: ServiceProcess = { child, port, url, exited, output: () => output };
  const healthy = waitFor(
    async () => (await fetch(`${url}/actuator/health`, { signal: AbortSignal.timeout(2000) })).status === 200,
    { what: `the ${name} process to be healthy`, timeoutMs: readyTimeoutMs, intervalMs: 100 },
  );
  const died = exited.then(({ code, signal }) => Promise.reject(new Error(`the ${name} process exited early (${code ?? signal}): ${output}`)));
  try {
    await Promise.race([healthy, died]);
  } catch (error) {
    child.kill('SIGKILL');
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
