/** Starts the gateway on port 0 in front of a test stack, reading the stack's (live) service URLs. */
import http from 'node:http';
import net from 'node:net';
import { createGateway, type GatewayDeps, type GatewayRuntime } from '../gateway';
import type { Config } from '../platform/config';
import { createLogger, type Logger } from '../platform/logger';

export interface RunningGateway {
  url: string;
  runtime: GatewayRuntime;
  stop(): Promise<void>;
}

export type GatewayOptions = Omit<GatewayDeps, 'config' | 'logger'> & { logger?: Logger };

export async function startGateway(config: Config, options: GatewayOptions = {}): Promise<RunningGateway> {
  const runtime = await createGateway({ ...options, config, logger: options.logger ?? createLogger(config.logLevel) });
  const port = await runtime.start(0, '127.0.0.1');
  return { url: `http://127.0.0.1:${port}`, runtime, stop: () => runtime.stop() };
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One HTTP request with the request target sent exactly as given (supertest would normalise
 * `/a/./b` or `%2e`), for path-trick tests.
 */
export function rawRequest(baseUrl: string, method: string, target: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path: target, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
