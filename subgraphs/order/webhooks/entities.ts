/** The webhooks' tables: the endpoints admins register, one delivery per event and endpoint, and each attempt at it. */
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../../../platform/database';

export const DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The longest endpoint URL, as stored (parsed and percent-encoded). */
export const MAX_URL_LENGTH = 2048;

/** A secret a rotation replaced, still signing beside the current one until `expiresAt`. */
export interface RetiredSecret {
  secret: string;
  expiresAt: Date;
}

/** At most this many earlier secrets sign beside the current one: a header a receiver can still read. */
export const MAX_RETIRED_SECRETS = 5;

/** The earlier secrets of an endpoint still inside their overlap at `now`, newest first. */
export function overlappingSecrets(endpoint: Pick<WebhookEndpoint, 'previousSecrets'>, now = new Date()): RetiredSecret[] {
  return endpoint.previousSecrets.filter((retired) => retired.expiresAt > now);
}

const retiredSecrets = {
  to: (value: RetiredSecret[]) => JSON.stringify(value.map((retired) => ({ secret: retired.secret, expiresAt: retired.expiresAt.toISOString() }))),
  from: (value: string | null) =>
    (JSON.parse(value ?? '[]') as { secret: string; expiresAt: string }[]).map((retired) => ({ secret: retired.secret, expiresAt: new Date(retired.expiresAt) })),
};

@Entity({ name: 'webhook_endpoints' })
export class WebhookEndpoint {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'varchar', length: MAX_URL_LENGTH })
  url!: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  description!: string | null;

  /** The event types and wildcards subscribed, a JSON array. */
  @Column({ type: 'text', transformer: { to: (value: string[]) => JSON.stringify(value), from: (value: string) => JSON.parse(value) as string[] } })
  events!: string[];

  @Column({ type: 'boolean' })
  enabled!: boolean;

  @Column({ type: 'varchar', length: 100 })
  secret!: string;

  /**
   * The secrets earlier rotations replaced whose overlap had not ended at the last rotation, newest
   * first, a JSON array (at most MAX_RETIRED_SECRETS of them, so it fits its column).
   */
  @Column({ name: 'previous_secrets', type: 'varchar', length: 1000, transformer: retiredSecrets })
  previousSecrets!: RetiredSecret[];

  /** The first failed attempt since the last success; null while the endpoint answers. */
  @TimestampColumn('failing_since', { nullable: true })
  failingSince!: Date | null;

  @TimestampColumn('disabled_at', { nullable: true })
  disabledAt!: Date | null;

  @Column({ name: 'disabled_reason', type: 'varchar', length: 500, nullable: true })
  disabledReason!: string | null;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('updated_at')
  updatedAt!: Date;
}

@Entity({ name: 'webhook_deliveries' })
@Index('uq_webhook_deliveries_endpoint_event', ['endpointId', 'eventId'], { unique: true })
@Index('ix_webhook_deliveries_due', ['status', 'nextAttemptAt'])
export class WebhookDelivery {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'endpoint_id', type: 'varchar', length: 36 })
  endpointId!: string;

  @Column({ name: 'event_id', type: 'varchar', length: 36 })
  eventId!: string;

  @Column({ type: 'varchar', length: 40 })
  type!: string;

  /** The exact body sent, so every attempt signs and sends the same bytes. */
  @Column({ type: 'text' })
  payload!: string;

  @Column({ type: 'varchar', length: 10 })
  status!: DeliveryStatus;

  @Column({ type: 'int' })
  attempts!: number;

  /** Attempts allowed in all: 1 + 5 retries, one more for each resend. */
  @Column({ name: 'max_attempts', type: 'int' })
  maxAttempts!: number;

  @TimestampColumn('next_attempt_at', { nullable: true })
  nextAttemptAt!: Date | null;

  /** Set while a dispatcher sends an attempt; another waits until it passes. */
  @TimestampColumn('claimed_until', { nullable: true })
  claimedUntil!: Date | null;

  @Column({ name: 'claim_token', type: 'varchar', length: 36, nullable: true })
  claimToken!: string | null;

  @Column({ name: 'last_status_code', type: 'int', nullable: true })
  lastStatusCode!: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError!: string | null;

  @Column({ name: 'response_excerpt', type: 'text', nullable: true })
  responseExcerpt!: string | null;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('updated_at')
  updatedAt!: Date;
}

/** One attempt at a delivery, as the delivery log shows it. */
@Entity({ name: 'webhook_attempts' })
export class WebhookAttempt {
  @PrimaryColumn({ name: 'delivery_id', type: 'varchar', length: 36 })
  deliveryId!: string;

  @PrimaryColumn({ type: 'int' })
  number!: number;

  @TimestampColumn('attempted_at')
  attemptedAt!: Date;

  @Column({ name: 'status_code', type: 'int', nullable: true })
  statusCode!: number | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  error!: string | null;

  @Column({ name: 'response_excerpt', type: 'text', nullable: true })
  responseExcerpt!: string | null;

  @Column({ name: 'duration_ms', type: 'int' })
  durationMs!: number;
}
