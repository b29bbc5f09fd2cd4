/**
 * Webhook endpoints and their deliveries, for admins (CONTRACT §11): register, change, delete,
 * rotate a secret (the old one keeps signing for an overlap), send a test ping, read the delivery
 * log and resend a delivery. The secret is shown only when made.
 */
import { randomUUID } from 'node:crypto';
import { In, type FindOptionsWhere } from 'typeorm';
import { assertRole, type Principal } from '../../../platform/auth';
import type { Config } from '../../../platform/config';
import { forUpdate, type Database } from '../../../platform/database';
import { badRequest, conflict, contractTimestamp, notFound, validationFailed } from '../../../platform/errors';
import { MAX_RETIRED_SECRETS, MAX_URL_LENGTH, WebhookAttempt, WebhookDelivery, WebhookEndpoint, overlappingSecrets, type DeliveryStatus } from './entities';
import { Dispatcher } from './dispatcher';
import type { CreateEndpointRequest, RotateSecretRequest, UpdateEndpointRequest } from './dto';
import { TEST_EVENT_TYPE, newDelivery } from './events';
import { newSecret } from './signature';
import { TargetRefused, checkTarget, parseTargetUrl } from './targets';

const DEFAULT_OVERLAP_SECONDS = 24 * 3600;
const timestamp = (date: Date | null) => (date ? contractTimestamp(date) : null);

export interface EndpointResponse {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabledAt: string | null;
  disabledReason: string | null;
  failingSince: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export type EndpointWithSecret = EndpointResponse & { secret: string };

export interface AttemptResponse {
  number: number;
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  durationMs: number;
}

export interface DeliveryResponse {
  id: string;
  endpointId: string;
  eventId: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  responseExcerpt: string | null;
  payload: unknown;
  attemptLog: AttemptResponse[];
  createdAt: string;
  updatedAt: string;
}

function toEndpoint(endpoint: WebhookEndpoint, now = new Date()): EndpointResponse {
  const ends = overlappingSecrets(endpoint, now).map((retired) => retired.expiresAt.getTime());
  const overlap = ends.length > 0 ? new Date(Math.max(...ends)) : null;
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    enabled: endpoint.enabled,
    disabledAt: timestamp(endpoint.disabledAt),
    disabledReason: endpoint.disabledReason,
    failingSince: timestamp(endpoint.failingSince),
    previousSecretExpiresAt: timestamp(overlap),
    createdAt: contractTimestamp(endpoint.createdAt),
    updatedAt: contractTimestamp(endpoint.updatedAt),
  };
}

function toDelivery(delivery: WebhookDelivery, attempts: WebhookAttempt[]): DeliveryResponse {
  return {
    id: delivery.id,
    endpointId: delivery.endpointId,
    eventId: delivery.eventId,
    type: delivery.type,
    status: delivery.status,
    attempts: delivery.attempts,
    nextAttemptAt: timestamp(delivery.nextAttemptAt),
    lastStatusCode: delivery.lastStatusCode,
    lastError: delivery.lastError,
    responseExcerpt: delivery.responseExcerpt,
    payload: JSON.parse(delivery.payload) as unknown,
    attemptLog: attempts
      .sort((a, b) => a.number - b.number)
      .map((a) => ({
        number: a.number,
        attemptedAt: contractTimestamp(a.attemptedAt),
        statusCode: a.statusCode,
        error: a.error,
        responseExcerpt: a.responseExcerpt,
        durationMs: a.durationMs,
      })),
    createdAt: contractTimestamp(delivery.createdAt),
    updatedAt: contractTimestamp(delivery.updatedAt),
  };
}

/** A new, enabled endpoint with a fresh secret. */
export function newEndpoint(fields: Pick<WebhookEndpoint, 'url' | 'events' | 'description'>, now = new Date()): WebhookEndpoint {
  return Object.assign(new WebhookEndpoint(), {
    id: randomUUID(),
    url: fields.url,
    description: fields.description,
    events: [...new Set(fields.events)],
    enabled: true,
    secret: newSecret(),
    previousSecrets: [],
    failingSince: null,
    disabledAt: null,
    disabledReason: null,
    createdAt: now,
    updatedAt: now,
  });
}

const endpointNotFound = (id: string) => notFound(`Webhook endpoint not found: ${id}`, 'WEBHOOK_ENDPOINT_NOT_FOUND');

export class WebhookService {
  constructor(
    private readonly db: Database,
    private readonly dispatcher: Dispatcher,
    private readonly settings: Config['webhooks'],
  ) {}

  /**
   * The URL as it is stored (parsed and normalised: a non-ASCII path percent-encoded), held to the
   * column's length as stored (CONTRACT §1.2) and to the targets a webhook may reach.
   */
  private async checkedUrl(url: string): Promise<string> {
    try {
      const stored = parseTargetUrl(url).toString();
      if (stored.length > MAX_URL_LENGTH) throw validationFailed([`url: must be shorter than or equal to ${MAX_URL_LENGTH} characters once percent-encoded`]);
      await checkTarget(stored, this.settings.allowPrivateTargets);
      return stored;
    } catch (error) {
      if (error instanceof TargetRefused) throw badRequest(`Webhook URL refused: ${error.message}`, 'WEBHOOK_TARGET_REFUSED');
      throw error;
    }
  }

  private async endpoint(id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.db.manager.findOne(WebhookEndpoint, { where: { id } });
    if (!endpoint) throw endpointNotFound(id);
    return endpoint;
  }

  private async deliveries(where: FindOptionsWhere<WebhookDelivery>, page?: { limit: number; offset: number }): Promise<{ deliveries: DeliveryResponse[]; total: number }> {
    const [rows, total] = await this.db.manager.findAndCount(WebhookDelivery, {
      where,
      order: { createdAt: 'DESC', id: 'ASC' },
      take: page?.limit,
      skip: page?.offset || undefined,
    });
    const attempts = rows.length === 0 ? [] : await this.db.manager.find(WebhookAttempt, { where: { deliveryId: In(rows.map((d) => d.id)) } });
    return {
      deliveries: rows.map((d) =>
        toDelivery(
          d,
          attempts.filter((a) => a.deliveryId === d.id),
        ),
      ),
      total,
    };
  }

  private async delivery(id: string): Promise<DeliveryResponse> {
    const [delivery] = (await this.deliveries({ id })).deliveries;
    if (!delivery) throw notFound(`Webhook delivery not found: ${id}`, 'WEBHOOK_DELIVERY_NOT_FOUND');
    return delivery;
  }

  async create(principal: Principal, request: CreateEndpointRequest): Promise<EndpointWithSecret> {
    assertRole(principal, 'ADMIN');
    const endpoint = newEndpoint({ url: await this.checkedUrl(request.url), events: request.events, description: request.description ?? null });
    await this.db.transaction((manager) => manager.insert(WebhookEndpoint, endpoint));
    return { ...toEndpoint(endpoint), secret: endpoint.secret };
  }

  async list(principal: Principal): Promise<EndpointResponse[]> {
    assertRole(principal, 'ADMIN');
    const endpoints = await this.db.manager.find(WebhookEndpoint, { order: { createdAt: 'ASC', id: 'ASC' } });
    return endpoints.map((endpoint) => toEndpoint(endpoint));
  }

  async get(principal: Principal, id: string): Promise<EndpointResponse> {
    assertRole(principal, 'ADMIN');
    return toEndpoint(await this.endpoint(id));
  }

  async update(principal: Principal, id: string, request: UpdateEndpointRequest): Promise<EndpointResponse> {
    assertRole(principal, 'ADMIN');
    const endpoint = await this.endpoint(id);
    const change: Partial<WebhookEndpoint> = { updatedAt: new Date() };
    if (request.url !== undefined) change.url = await this.checkedUrl(request.url);
    if (request.events !== undefined) change.events = [...new Set(request.events)];
    if (request.description !== undefined) change.description = request.description;
    if (request.enabled !== undefined) change.enabled = request.enabled;
    if (request.enabled === true && !endpoint.enabled) Object.assign(change, { disabledAt: null, disabledReason: null, failingSince: null });
    await this.db.transaction((manager) => manager.update(WebhookEndpoint, { id }, change));
    return toEndpoint(await this.endpoint(id));
  }

  async remove(principal: Principal, id: string): Promise<void> {
    assertRole(principal, 'ADMIN');
    await this.endpoint(id);
    await this.db.transaction(async (manager) => {
      await Dispatcher.deleteOf(manager, id);
      await manager.delete(WebhookEndpoint, { id });
    });
  }

  /**
   * A new secret. The one it replaces keeps signing beside it for `overlapSeconds` (default 24 h;
   * 0 ends it at once), so receivers can switch without a gap, and every earlier secret still
   * inside its own overlap keeps signing until that ends. Rotations of one endpoint are taken one
   * after the other under its row lock, so two at once keep both secrets. 409 when more than
   * MAX_RETIRED_SECRETS earlier secrets would overlap.
   */
  async rotateSecret(principal: Principal, id: string, request: RotateSecretRequest): Promise<EndpointWithSecret> {
    assertRole(principal, 'ADMIN');
    const overlapSeconds = request.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
    const secret = newSecret();
    await this.db.transaction(async (manager) => {
      const endpoint = await manager.findOne(WebhookEndpoint, { where: { id }, ...forUpdate(this.db) });
      if (!endpoint) throw endpointNotFound(id);
      const now = new Date();
      const replaced = overlapSeconds > 0 ? [{ secret: endpoint.secret, expiresAt: new Date(now.getTime() + overlapSeconds * 1000) }] : [];
      const previousSecrets = [...replaced, ...overlappingSecrets(endpoint, now)];
      if (previousSecrets.length > MAX_RETIRED_SECRETS) {
        const first = new Date(Math.min(...overlappingSecrets(endpoint, now).map((retired) => retired.expiresAt.getTime())));
        throw conflict(
          `Webhook endpoint ${id} already signs with ${MAX_RETIRED_SECRETS} earlier secrets: rotate with overlapSeconds 0, or after ${contractTimestamp(first)} when the first overlap ends`,
          'WEBHOOK_SECRETS_OVERLAP',
        );
      }
      await manager.update(WebhookEndpoint, { id }, { secret, previousSecrets, updatedAt: now });
    });
    return { ...toEndpoint(await this.endpoint(id)), secret };
  }

  /** Sends a `webhook.test` ping to the endpoint now (enabled or not) and answers the delivery with its attempt. */
  async sendTest(principal: Principal, id: string): Promise<DeliveryResponse> {
    assertRole(principal, 'ADMIN');
    const endpoint = await this.endpoint(id);
    const now = new Date();
    const eventId = randomUUID();
    const body = JSON.stringify({
      id: eventId,
      type: TEST_EVENT_TYPE,
      createdAt: contractTimestamp(now),
      data: { endpointId: endpoint.id, message: 'A test delivery from the bookstore' },
    });
    const delivery = Object.assign(newDelivery(endpoint.id, eventId, TEST_EVENT_TYPE, body, now), { maxAttempts: 1, nextAttemptAt: null });
    await this.db.transaction((manager) => manager.insert(WebhookDelivery, delivery));
    await this.attemptNow(delivery.id, {});
    return this.delivery(delivery.id);
  }

  /** The deliveries to an endpoint, newest first. */
  async listDeliveries(
    principal: Principal,
    id: string,
    page: { limit: number; offset: number; status?: DeliveryStatus },
  ): Promise<{ deliveries: DeliveryResponse[]; total: number }> {
    assertRole(principal, 'ADMIN');
    await this.endpoint(id);
    return this.deliveries(page.status ? { endpointId: id, status: page.status } : { endpointId: id }, page);
  }

  /** One more attempt at a delivery, now, whatever its status; answers the delivery with it. 409 while another attempt is on its way. */
  async resend(principal: Principal, deliveryId: string): Promise<DeliveryResponse> {
    assertRole(principal, 'ADMIN');
    const current = await this.delivery(deliveryId);
    await this.attemptNow(deliveryId, { status: 'PENDING', maxAttempts: current.attempts + 1, nextAttemptAt: null });
    return this.delivery(deliveryId);
  }

  private async attemptNow(deliveryId: string, change: Partial<WebhookDelivery>): Promise<void> {
    const claimed = await this.dispatcher.claim(deliveryId, false, change);
    if (!claimed) throw conflict(`Webhook delivery ${deliveryId} is being sent; try again in a moment`, 'WEBHOOK_DELIVERY_IN_FLIGHT');
    await this.dispatcher.attempt(claimed);
  }
}
