/**
 * Sends deliveries, one dispatcher per process. An attempt is claimed first with a conditional
 * UPDATE (free, or its claim expired), so of two replicas only one sends it; the claim outlives the
 * attempt's timeout, and the attempt's outcome is written only under the claim's token. A failed
 * attempt is retried after `retryBaseMs × 2^(n-1)` until its attempts are spent, then FAILED. An
 * endpoint whose every attempt failed for `disableAfterMs` is disabled, with the reason, and its
 * waiting deliveries fail with it.
 */
import { randomUUID } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import { In, IsNull, LessThan, LessThanOrEqual, type EntityManager } from 'typeorm';
import type { Config } from '../../../platform/config';
import type { Database } from '../../../platform/database';
import { contractTimestamp } from '../../../platform/errors';
import type { Logger } from '../../../platform/logger';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint, overlappingSecrets } from './entities';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature';
import { postTo } from './targets';

const CLAIM_MARGIN_MS = 30_000;
const BATCH = 20;

export interface Claimed {
  delivery: WebhookDelivery;
  endpoint: WebhookEndpoint;
  token: string;
}

/** The secrets a delivery is signed with now: the current one, then each earlier one still inside its overlap, newest first. */
export function signingSecrets(endpoint: WebhookEndpoint, now = new Date()): string[] {
  return [endpoint.secret, ...overlappingSecrets(endpoint, now).map((retired) => retired.secret)];
}

export class Dispatcher {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private stopped = true;
  private readonly attempts = new Counter({
    name: 'bookstore_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: delivered (a 2xx) or failed (any other answer, or none)',
    labelNames: ['outcome'],
    registers: [],
  });
  private readonly givenUp = new Counter({
    name: 'bookstore_webhook_deliveries_failed_total',
    help: 'Webhook deliveries that ended FAILED: their retries spent, or their endpoint disabled',
    registers: [],
  });

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly settings: Config['webhooks'],
  ) {}

  registerMetrics(registry: Registry): void {
    // Both outcomes from the start, so a failure ratio has a denominator before the first failure.
    for (const outcome of ['delivered', 'failed']) this.attempts.inc({ outcome }, 0);
    registry.registerMetric(this.attempts);
    registry.registerMetric(this.givenUp);
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pass;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.pass = this.sendDue()
        .catch((error: unknown) => this.logger.error({ error: (error as Error).message }, 'webhook dispatch failed; trying again'))
        .finally(() => this.schedule(this.settings.pollMs));
    }, delayMs);
    this.timer.unref();
  }

  /** Sends what is due, a batch at a time, in parallel. */
  private async sendDue(): Promise<void> {
    for (;;) {
      const now = new Date();
      const due = await this.db.manager.find(WebhookDelivery, {
        select: { id: true },
        where: [
          { status: 'PENDING', nextAttemptAt: LessThanOrEqual(now), claimedUntil: IsNull() },
          { status: 'PENDING', nextAttemptAt: LessThanOrEqual(now), claimedUntil: LessThan(now) },
        ],
        order: { nextAttemptAt: 'ASC' },
        take: BATCH,
      });
      const claimed = (await Promise.all(due.map(({ id }) => this.claim(id, true)))).filter((c): c is Claimed => c !== undefined);
      await Promise.all(claimed.map((c) => (c.endpoint.enabled ? this.attempt(c) : this.failWithEndpoint(c))));
      if (due.length < BATCH || this.stopped) return;
    }
  }

  /**
   * Claims a delivery for one attempt: a conditional UPDATE that only one process can win. The
   * dispatcher claims only PENDING deliveries that are due; an admin's resend any that is free.
   */
  async claim(id: string, dueOnly: boolean, change: Partial<WebhookDelivery> = {}): Promise<Claimed | undefined> {
    const now = new Date();
    const token = randomUUID();
    const won = await this.db.transaction(async (manager) => {
      const query = manager
        .createQueryBuilder()
        .update(WebhookDelivery)
        .set({ ...change, claimToken: token, claimedUntil: new Date(now.getTime() + this.settings.timeoutMs + CLAIM_MARGIN_MS) })
        .where('id = :id AND (claimed_until IS NULL OR claimed_until < :now)', { id, now });
      if (dueOnly) query.andWhere("status = 'PENDING' AND next_attempt_at <= :now", { now });
      return ((await query.execute()).affected ?? 0) === 1;
    });
    if (!won) return undefined;
    const delivery = await this.db.manager.findOneOrFail(WebhookDelivery, { where: { id } });
    const endpoint = await this.db.manager.findOne(WebhookEndpoint, { where: { id: delivery.endpointId } });
    if (!endpoint) {
      await this.db.transaction((manager) => manager.delete(WebhookDelivery, { id, claimToken: token }));
      return undefined;
    }
    return { delivery, endpoint, token };
  }

  /** Sends one claimed attempt and records it; answers the delivery as it stands after. */
  async attempt({ delivery, endpoint, token }: Claimed): Promise<WebhookDelivery> {
    const started = new Date();
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': 'Bookstore-Webhooks/1.0',
      [SIGNATURE_HEADER]: signatureHeader(delivery.payload, signingSecrets(endpoint, started)),
      [EVENT_ID_HEADER]: delivery.eventId,
    };
    let statusCode: number | null = null;
    let excerpt: string | null = null;
    let error: string | null = null;
    try {
      const answer = await postTo(endpoint.url, delivery.payload, headers, { timeoutMs: this.settings.timeoutMs, allowPrivate: this.settings.allowPrivateTargets });
      statusCode = answer.statusCode;
      excerpt = answer.excerpt;
      if (statusCode < 200 || statusCode > 299) error = `answered HTTP ${statusCode}`;
    } catch (failure) {
      error = (failure as Error).message.slice(0, 500);
    }
    const number = delivery.attempts + 1;
    const done = error === null || number >= delivery.maxAttempts;
    const finished = new Date();
    const failedWithEndpoint = await this.db.transaction(async (manager) => {
      await manager.insert(WebhookAttempt, {
        deliveryId: delivery.id,
        number,
        attemptedAt: started,
        statusCode,
        error,
        responseExcerpt: excerpt,
        durationMs: finished.getTime() - started.getTime(),
      });
      await manager.update(
        WebhookDelivery,
        { id: delivery.id, claimToken: token },
        {
          attempts: number,
          status: error === null ? 'SUCCEEDED' : done ? 'FAILED' : 'PENDING',
          nextAttemptAt: done ? null : new Date(finished.getTime() + this.settings.retryBaseMs * 2 ** (number - 1)),
          claimToken: null,
          claimedUntil: null,
          lastStatusCode: statusCode,
          lastError: error,
          responseExcerpt: excerpt,
          updatedAt: finished,
        },
      );
      return this.recordHealth(manager, endpoint, error, finished);
    });
    this.attempts.inc({ outcome: error === null ? 'delivered' : 'failed' });
    this.givenUp.inc((error !== null && done ? 1 : 0) + failedWithEndpoint);
    if (error !== null)
      this.logger.info(
        { deliveryId: delivery.id, endpointId: endpoint.id, attempt: number, error },
        done ? 'webhook delivery failed for good' : 'webhook attempt failed; retrying',
      );
    return this.db.manager.findOneOrFail(WebhookDelivery, { where: { id: delivery.id } });
  }

  /**
   * A success clears the endpoint's failing streak; a failure starts one, and one that lasted the
   * window disables the endpoint. Resolves with the number of waiting deliveries failed with it.
   */
  private async recordHealth(manager: EntityManager, endpoint: WebhookEndpoint, error: string | null, now: Date): Promise<number> {
    if (error === null) {
      await manager.update(WebhookEndpoint, { id: endpoint.id }, { failingSince: null });
      return 0;
    }
    await manager.update(WebhookEndpoint, { id: endpoint.id, failingSince: IsNull() }, { failingSince: now });
    const current = await manager.findOne(WebhookEndpoint, { where: { id: endpoint.id } });
    if (!current?.enabled || !current.failingSince || now.getTime() - current.failingSince.getTime() < this.settings.disableAfterMs) return 0;
    const reason = `Every delivery failed since ${contractTimestamp(current.failingSince)}; last: ${error}`.slice(0, 500);
    await manager.update(WebhookEndpoint, { id: endpoint.id, enabled: true }, { enabled: false, disabledAt: now, disabledReason: reason, updatedAt: now });
    const { affected } = await manager.update(
      WebhookDelivery,
      { endpointId: endpoint.id, status: 'PENDING', claimToken: IsNull() },
      { status: 'FAILED', nextAttemptAt: null, lastError: 'endpoint disabled', updatedAt: now },
    );
    this.logger.warn({ endpointId: endpoint.id, url: endpoint.url, failingSince: current.failingSince, reason }, 'webhook endpoint disabled: its deliveries kept failing');
    return affected ?? 0;
  }

  /** A delivery claimed for an endpoint disabled meanwhile: it fails without an attempt. */
  private async failWithEndpoint({ delivery, token }: Claimed): Promise<void> {
    const { affected } = await this.db.transaction((manager) =>
      manager.update(
        WebhookDelivery,
        { id: delivery.id, claimToken: token },
        { status: 'FAILED', nextAttemptAt: null, claimToken: null, claimedUntil: null, lastError: 'endpoint disabled', updatedAt: new Date() },
      ),
    );
    this.givenUp.inc(affected ?? 0);
  }

  /** Deliveries an endpoint's deletion leaves behind go with it. */
  static async deleteOf(manager: EntityManager, endpointId: string): Promise<void> {
    const ids = (await manager.find(WebhookDelivery, { select: { id: true }, where: { endpointId } })).map((d) => d.id);
    for (let i = 0; i < ids.length; i += 500) await manager.delete(WebhookAttempt, { deliveryId: In(ids.slice(i, i + 500)) });
    await manager.delete(WebhookDelivery, { endpointId });
  }
}
