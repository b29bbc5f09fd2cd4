/**
 * A real S3-protocol server for tests of the S3 cover store: s3rver (npm) run as a child process
 * on a free loopback port with a throwaway directory and one bucket, stopped by its pid. The
 * store under test talks to it through `@aws-sdk/client-s3`, exactly as it would to MinIO or AWS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePorts } from './event-fixtures';
import { waitFor } from './wait';

/** s3rver's fixed development credentials; the SDK's default chain reads them from the environment. */
export const S3RVER_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

export class S3Server {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly bucket: string,
    private readonly directory: string,
  ) {}

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The configuration a book service needs to keep its covers in this server's bucket. */
  get env(): Record<string, string> {
    return { S3_BUCKET: this.bucket, S3_ENDPOINT: this.endpoint, S3_PUBLIC_URL: `${this.endpoint}/${this.bucket}` };
  }

  static async start(bucket = 'covers'): Promise<S3Server> {
    const [port] = await freePorts(1);
    const server = new S3Server(port, bucket, fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-')));
    await server.resume();
    return server;
  }

  /** Starts the server (again) on the same port and data. */
  async resume(): Promise<void> {
    const cli = require.resolve('s3rver/bin/s3rver.js');
    this.child = spawn(process.execPath, [cli, '-d', this.directory, '-a', '127.0.0.1', '-p', String(this.port), '--silent', '--configure-bucket', this.bucket], {
      stdio: 'ignore',
    });
    await waitFor(() => accepts(this.port), { what: `s3rver on port ${this.port}`, timeoutMs: 30_000 });
  }

  /** Stops the process (SIGTERM to its pid) and waits until the port refuses connections. */
  async pause(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    this.child = undefined;
  }

  async destroy(): Promise<void> {
    await this.pause();
    fs.rmSync(this.directory, { recursive: true, force: true });
  }
}
