/**
 * A real HTTP receiver for the webhook tests, in the test process: it records every request (path,
 * headers, raw body) and answers each path by a script of statuses, the last one repeated.
 */
import type http from 'node:http';
import { listen, type Listening } from '../platform/http';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; createdAt: string; data: Record<string, unknown> };
}

export interface Receiver {
  url(path: string): string;
  /** What `path` answers from now on: each status once, the last one for every request after. */
  script(path: string, statuses: number[], extra?: { location?: string; body?: string }): void;
  received(path: string): Received[];
  close(): Promise<void>;
}

export async function startReceiver(host = '127.0.0.1'): Promise<Receiver> {
  const requests: Received[] = [];
  const scripts = new Map<string, { statuses: number[]; location?: string; body?: string }>();
  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ path, headers: req.headers, body, json: body ? JSON.parse(body) : undefined });
      const script = scripts.get(path) ?? { statuses: [200] };
      const status = script.statuses.length > 1 ? (script.statuses.shift() as number) : script.statuses[0];
      res.writeHead(status, { 'Content-Type': 'text/plain', ...(script.location ? { Location: script.location } : {}) });
      res.end(script.body ?? `answered ${status}`);
    });
  };
  const listening: Listening = await listen(handler, 0, host);
  return {
    url: (path) => `http://${host}:${listening.port}${path}`,
    script: (path, statuses, extra = {}) => scripts.set(path, { statuses: [...statuses], ...extra }),
    received: (path) => requests.filter((r) => r.path === path),
    close: () => listening.close(),
  };
}
