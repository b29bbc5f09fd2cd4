/**
 * Topic names and payloads (CONTRACT §7), declared once for producers and consumers alike. Each
 * payload is a class whose decorators are the consumer's validation; producers build plain objects
 * of the same shape. Every event carries `eventId`, `type` and `occurredAt` besides its own fields.
 */
import { Equals, IsISO8601, IsUUID } from 'class-validator';

export const TOPICS = {
  paymentCreated: 'payment-created',
  paymentSuccess: 'payment-success',
  paymentFailed: 'payment-failed',
  paymentRefunded: 'payment-refunded',
  paymentCompleted: 'payment-completed',
  orderCreated: 'order-created',
  userDeleted: 'user-deleted',
} as const;

export type Topic = (typeof TOPICS)[keyof typeof TOPICS];

export const deadLetterTopic = (topic: string) => `${topic}.DLT`;

export class EventEnvelope {
  @IsUUID('all')
  eventId!: string;

  type!: string;

  /** ISO-8601 UTC. */
  @IsISO8601({ strict: true })
  occurredAt!: string;
}

export class UserDeletedEvent extends EventEnvelope {
  @Equals('UserDeletedEvent')
  declare type: 'UserDeletedEvent';

  @IsUUID('all')
  userId!: string;
}
