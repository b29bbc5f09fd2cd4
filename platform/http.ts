/**
 * HTTP plumbing shared by services: listening with a graceful stop, and calls to another service
 * that turn "down or too slow" into the contract's 503.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { serviceUnavailable } from '../rest-compat/errors';

export interface Listening {
  server: http.Server;
  port: number;
  close(): Promise<void>;
}

export function listen(app: Express, port: number, host = '0.0.0.0'): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(app);
    server.keepAliveTimeout = 65_000;
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({ server, port: (server.address() as AddressInfo).port, close: () => closeServer(server) });
    });
  });
}

/** Stops accepting, lets in-flight requests finish (up to `graceMs`), then drops what is left. */
export function closeServer(server: http.Server, graceMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

export interface CallOptions {
  /** Names the dependency in the 503 message. */
  service: string;
  timeoutMs?: number;
}

/** `fetch` to another service; a refused connection or a timeout becomes 503. */
export async function callService(url: string, init: RequestInit, options: CallOptions): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(options.timeoutMs ?? 5000) });
  } catch {
    throw serviceUnavailable(`The ${options.service} service is unavailable`, `${options.service.toUpperCase()}_UNAVAILABLE`);
  }
}
