/**
 * `GET /api/payments/{paymentId}/events`: a payment as plain Server-Sent Events for shops that do
 * not speak GraphQL (CONTRACT §12): the owner gets the `PaymentResponse` at once, then again after
 * each event about it (paid, failed, refunded, its order made), read after this service has applied
 * it. Every process of the service follows the payment's topics in a consumer group of its own, so
 * the replica holding a stream hears of a change made by another. The stream ends when the token
 * expires or its session is revoked (checked each second), and carries a heartbeat comment.
 */
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { bearerToken, type Principal, type TokenVerifier } from '../../platform/auth';
import { awaitApplied } from '../../platform/events/after-events';
import type { EventBus, Subscription } from '../../platform/events/bus';
import { consumerGroupOf } from '../../platform/events/consumer';
import { TOPICS } from '../../platform/events/topics';
import type { Database } from '../../platform/database';
import type { Logger } from '../../platform/logger';
import type { PaymentResponse } from './dto';

/** Topics whose events change a payment as `PaymentResponse` shows it. */
const PAYMENT_TOPICS = [TOPICS.paymentSuccess, TOPICS.paymentFailed, TOPICS.paymentRefunded, TOPICS.paymentRefundSucceeded, TOPICS.paymentRefundFailed, TOPICS.orderCreated];
/** Of those, the ones this service applies itself (the rest it publishes after its own commit). */
const APPLIED_HERE = new Set<string>([TOPICS.orderCreated]);
const CHECK_MS = 1000;
const HEARTBEAT_EVERY = 15;
const READ_AFTER_MS = 2000;

type Cause = { topic: string; eventId: string };

export class PaymentWatch {
  private readonly watchers = new Map<string, Set<(cause: Cause) => void>>();

  constructor(
    private readonly db: Database,
    private readonly verifier: TokenVerifier,
    private readonly logger: Logger,
  ) {}

  follow(bus: EventBus): Promise<Subscription> {
    return bus.subscribe({
      groupId: `payment-watch.${randomUUID()}`,
      topics: PAYMENT_TOPICS,
      fromBeginning: false,
      handleBatch: async (messages) => {
        for (const message of messages) {
          let payload: { paymentId?: unknown; eventId?: unknown } | undefined;
          try {
            payload = JSON.parse(message.value) as typeof payload;
          } catch {
            continue;
          }
          if (typeof payload?.paymentId !== 'string') continue;
          const cause = { topic: message.topic, eventId: typeof payload.eventId === 'string' ? payload.eventId.toLowerCase() : '' };
          for (const watcher of this.watchers.get(payload.paymentId.toLowerCase()) ?? []) watcher(cause);
        }
      },
    });
  }

  /**
   * Streams the payment `read` answers for the caller (it throws, before anything is sent, for a
   * payment that is not theirs), until the client leaves or its token no longer counts.
   */
  async stream(req: Request, res: Response, principal: Principal, paymentId: string, read: () => Promise<PaymentResponse>): Promise<void> {
    let last = JSON.stringify(await read());
    const token = bearerToken(req.headers.authorization) ?? '';
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', connection: 'keep-alive' });
    let sequence = 0;
    const send = (json: string) => res.write(`event: payment\nid: ${paymentId}:${(sequence += 1)}\ndata: ${json}\n\n`);
    send(last);

    let causes: Cause[] = [];
    let running = false;
    const refresh = async () => {
      if (running) return;
      running = true;
      try {
        while (causes.length > 0 && !res.writableEnded) {
          const now = causes;
          causes = [];
          await awaitApplied(
            this.db,
            consumerGroupOf('payment'),
            now.filter((cause) => APPLIED_HERE.has(cause.topic) && cause.eventId).map((cause) => cause.eventId),
            READ_AFTER_MS,
          );
          const json = JSON.stringify(await read());
          if (json !== last && !res.writableEnded) {
            last = json;
            send(json);
          }
        }
      } catch (error) {
        this.logger.warn({ err: error, paymentId }, 'payment event stream could not read the payment');
      } finally {
        running = false;
      }
    };
    const key = paymentId.toLowerCase();
    const watcher = (cause: Cause) => {
      causes.push(cause);
      void refresh();
    };
    const watchers = this.watchers.get(key) ?? new Set();
    watchers.add(watcher);
    this.watchers.set(key, watchers);

    let ticks = 0;
    const end = (code: string, message: string) => {
      if (!res.writableEnded) res.end(`event: end\ndata: ${JSON.stringify({ code, message })}\n\n`);
    };
    const check = setInterval(() => {
      ticks += 1;
      this.verifier.verify(token).then(
        (again) => {
          if (again.userId !== principal.userId) end('UNAUTHENTICATED', 'The token no longer names this user');
          else if (ticks % HEARTBEAT_EVERY === 0 && !res.writableEnded) res.write(': heartbeat\n\n');
        },
        () => end('UNAUTHENTICATED', 'The token expired or its session was ended: sign in again'),
      );
    }, CHECK_MS);
    res.once('close', () => {
      clearInterval(check);
      watchers.delete(watcher);
      if (watchers.size === 0) this.watchers.delete(key);
    });
  }
}
