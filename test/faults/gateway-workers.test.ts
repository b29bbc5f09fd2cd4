/**
 * The gateway on several cores (`GATEWAY_WORKERS=2`, platform/workers.ts), as a real process in
 * front of a stack: both workers serve the one port, its metrics count what all of them answered
 * whichever one is asked, a worker that dies is replaced while the other serves, and SIGTERM stops
 * every worker and exits 0. The process is spawned from the TypeScript sources (process.ts).
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { INTERNAL_KEY } from '../stack';
import { startStack, waitFor, type Stack } from '../harness';
import { spawnService, within, type ServiceProcess } from './process';

jest.setTimeout(120_000);

let stack: Stack;
let gateway: ServiceProcess;

/** One request on a connection of its own, so the primary hands each to the next worker in turn. */
function getAlone(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** The primary's live children: its workers. */
function workersOf(pid: number): number[] {
  const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return children === '' ? [] : children.split(/\s+/).map(Number);
}

/** How many requests to the book service the gateway's metrics count, over every worker. */
function bookRequestsCounted(metrics: string): number {
  return metrics
    .split('\n')
    .filter((line) => line.startsWith('gateway_upstream_request_duration_seconds_count{') && line.includes('upstream="book"'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

let env: Record<string, string>;

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'payment', 'order', 'analytics'] });
  const urls = Object.fromEntries(Object.entries(stack.urls).map(([name, url]) => [`${name.toUpperCase()}_URL`, url]));
  env = { GATEWAY_WORKERS: '2', LOG_LEVEL: 'info', DB_URL: '', KAFKA_BROKERS: '', INTERNAL_API_KEY: INTERNAL_KEY, ...urls };
  gateway = await spawnService('gateway', env);
});

afterAll(async () => {
  if (gateway.child.exitCode === null) {
    gateway.child.kill('SIGTERM');
    await gateway.exited;
  }
  await stack?.stop();
});

it('serves the port from every worker, and its metrics count what all of them answered, whichever answers the scrape', async () => {
  expect(workersOf(gateway.child.pid ?? 0)).toHaveLength(2);
  const before = bookRequestsCounted((await getAlone(`${gateway.url}/actuator/prometheus`)).body);
  const answers = await Promise.all(Array.from({ length: 20 }, () => getAlone(`${gateway.url}/api/books/`)));
  expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
  // Each scrape is a connection of its own, so they go to both workers in turn: all count the same.
  const scrapes = [];
  for (let i = 0; i < 4; i += 1) scrapes.push(await getAlone(`${gateway.url}/actuator/prometheus`));
  expect(scrapes.map((s) => s.status)).toEqual([200, 200, 200, 200]);
  expect(scrapes.map((s) => bookRequestsCounted(s.body) - before)).toEqual([20, 20, 20, 20]);
});

it('replaces a worker that dies, serving from the other meanwhile', async () => {
  const pid = gateway.child.pid ?? 0;
  const [dead, survivor] = workersOf(pid);
  process.kill(dead, 'SIGKILL');
  await waitFor(() => !workersOf(pid).includes(dead), { what: 'the killed worker to be gone' });
  expect((await getAlone(`${gateway.url}/api/books/`)).status).toBe(200);
  const replaced = await waitFor(() => workersOf(pid).length === 2 && workersOf(pid), { what: 'a new worker in its place', timeoutMs: 30_000 });
  expect(replaced).toContain(survivor);
  expect(replaced).not.toContain(dead);
  expect(gateway.output()).toContain('a worker died; replacing it');
  await waitFor(() => gateway.output().split('every worker is serving').length === 3, { what: 'the new worker to serve', timeoutMs: 60_000 });
  const answers = await Promise.all([1, 2, 3, 4].map(() => getAlone(`${gateway.url}/api/books/`)));
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
});

it('exits 1 when its workers cannot start, as one process would', async () => {
  const holder = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const taken = (holder.address() as net.AddressInfo).port;
  let output = '';
  await expect(spawnService('gateway', env, 60_000, { port: taken, spawned: (failing) => void failing.exited.then(() => (output = failing.output())) })).rejects.toThrow(
    /exited early \(1\)/,
  );
  expect(output).toContain('a worker failed to start; stopping the others');
  holder.close();
});

it('stops every worker on SIGTERM and exits 0', async () => {
  const workers = workersOf(gateway.child.pid ?? 0);
  gateway.child.kill('SIGTERM');
  expect(await within(gateway.exited, 30_000, 'the gateway to exit')).toEqual({ code: 0, signal: null });
  for (const pid of workers) expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
});
