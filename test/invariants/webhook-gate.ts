/**
 * Stands between the Stripe simulator and the payment service's webhook route, so the workload can
 * delay and reorder deliveries: webhooks about a held PaymentIntent are acknowledged to the simulator
 * and kept; `release` delivers them newest first, signed anew as Stripe signs each attempt.
 */
import http from 'node:http';
import { signatureHeader } from '../../simulators/stripe/simulator';

const WEBHOOK_PATH = '/api/payments/webhook';

export class WebhookGate {
  private readonly held = new Map<string, string[]>();
  private server?: http.Server;

  /** `target` is the payment service's base URL, read at each delivery (it changes on a restart). */
  constructor(
    private readonly target: () => string,
    private readonly secret: string,
  ) {}

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        void this.receive(req, Buffer.concat(chunks).toString('utf8')).then(
          ({ status, body }) => res.writeHead(status, { 'content-type': 'text/plain' }).end(body),
          (error: unknown) => res.writeHead(502, { 'content-type': 'text/plain' }).end(String(error)),
        );
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }

  hold(intentId: string): void {
    if (!this.held.has(intentId)) this.held.set(intentId, []);
  }

  /** Delivers what was held for the intent, newest first, and lets later webhooks through. */
  async release(intentId: string): Promise<number[]> {
    const payloads = this.held.get(intentId) ?? [];
    this.held.delete(intentId);
    const statuses: number[] = [];
    for (const payload of payloads.reverse()) statuses.push((await this.deliver(payload)).status);
    return statuses;
  }

  /** Releases everything, so no event stays undelivered when the run settles. */
  async releaseAll(): Promise<void> {
    for (const intentId of [...this.held.keys()]) await this.release(intentId);
  }

  heldCount(): number {
    return [...this.held.values()].reduce((sum, list) => sum + list.length, 0);
  }

  private async receive(req: http.IncomingMessage, payload: string): Promise<{ status: number; body: string }> {
    if (req.method !== 'POST' || req.url !== WEBHOOK_PATH) return { status: 404, body: 'not a webhook' };
    const queue = this.held.get(intentOf(payload));
    if (queue) {
      queue.push(payload);
      return { status: 200, body: 'Webhook received' };
    }
    return this.deliver(payload);
  }

  private async deliver(payload: string): Promise<{ status: number; body: string }> {
    const response = await fetch(`${this.target()}${WEBHOOK_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signatureHeader(payload, this.secret) },
      body: payload,
    });
    return { status: response.status, body: await response.text() };
  }
}

function intentOf(payload: string): string {
  const object = (JSON.parse(payload) as { data: { object: { id: string; object: string; payment_intent?: string } } }).data.object;
  return object.object === 'payment_intent' ? object.id : (object.payment_intent ?? '');
}
