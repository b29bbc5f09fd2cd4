/**
 * Topic names and payloads (CONTRACT §7), declared once for producers and consumers alike. Each
 * payload is a class whose decorators are the consumer's validation; producers build plain objects
 * of the same shape. Every event carries `eventId`, `type` and `occurredAt` besides its own fields.
 */
import { Type } from 'class-transformer';
import { ArrayMinSize, Equals, IsArray, IsBoolean, IsISO8601, IsInt, IsNumber, IsObject, IsOptional, IsString, IsUUID, Min, ValidateNested } from 'class-validator';

export const TOPICS = {
  paymentCreated: 'payment-created',
  paymentSuccess: 'payment-success',
  paymentFailed: 'payment-failed',
  paymentRefunded: 'payment-refunded',
  paymentRefundFailed: 'payment-refund-failed',
  paymentRefundSucceeded: 'payment-refund-succeeded',
  paymentCompleted: 'payment-completed',
  orderCreated: 'order-created',
  orderCancelled: 'order-cancelled',
  orderStatusChanged: 'order-status-changed',
  bookStockLow: 'book-stock-low',
  userDeleted: 'user-deleted',
  emailVerified: 'email-verified',
  sessionsRevoked: 'sessions-revoked',
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

/** The owner of an account proved its address theirs (a verification link, or a password reset through it). */
export class EmailVerifiedEvent extends EventEnvelope {
  @Equals('EmailVerifiedEvent')
  declare type: 'EmailVerifiedEvent';

  @IsUUID('all')
  userId!: string;
}

/** Sessions the auth service ended; every token verifier refuses their access tokens from then on. */
export class SessionsRevokedEvent extends EventEnvelope {
  @Equals('SessionsRevokedEvent')
  declare type: 'SessionsRevokedEvent';

  @IsUUID('all')
  userId!: string;

  /** Empty: every session of the user (its tokens issued up to `occurredAt`). */
  @IsArray()
  @IsUUID('all', { each: true })
  sessionIds!: string[];
}

/** A purchased line as events carry it; `price` is the unit price. */
export class EventItem {
  @IsUUID('all')
  bookId!: string;

  @IsString()
  bookTitle!: string;

  @IsInt()
  @Min(1)
  quantity!: number;

  @IsNumber({ maxDecimalPlaces: 2, allowNaN: false, allowInfinity: false })
  @Min(0)
  price!: number;
}

const amount = () => IsNumber({ maxDecimalPlaces: 2, allowNaN: false, allowInfinity: false });

/** A purchase's lines, each an EventItem object. */
function EventItems(options: { atLeastOne: boolean }): PropertyDecorator {
  return (target, property) => {
    IsArray()(target, property);
    if (options.atLeastOne) ArrayMinSize(1)(target, property);
    IsObject({ each: true })(target, property);
    ValidateNested({ each: true })(target, property);
    Type(() => EventItem)(target, property);
  };
}

/** What every event about one checkout's payment carries. */
abstract class CheckoutPaymentEvent extends EventEnvelope {
  @IsUUID('all') paymentId!: string;
  @IsUUID('all') checkoutId!: string;
  @IsUUID('all') userId!: string;
  @amount() @Min(0) amount!: number;
}

export class PaymentCreatedEvent extends CheckoutPaymentEvent {
  @Equals('PaymentCreatedEvent')
  declare type: 'PaymentCreatedEvent';

  @EventItems({ atLeastOne: true })
  items!: EventItem[];
}

export class PaymentSuccessEvent extends CheckoutPaymentEvent {
  @Equals('PaymentSuccessEvent')
  declare type: 'PaymentSuccessEvent';

  /** The provider's PaymentIntent id. */
  @IsString() transactionId!: string;

  @EventItems({ atLeastOne: true })
  items!: EventItem[];

  @IsString() email!: string;
  @IsString() firstName!: string;
  @IsString() phoneNumber!: string;
}

export class PaymentFailedEvent extends CheckoutPaymentEvent {
  @Equals('PaymentFailedEvent')
  declare type: 'PaymentFailedEvent';

  @IsString() transactionId!: string;
  /** A short code; `checkout_expired` when the checkout's stock hold ran out unpaid (not a failed payment, CONTRACT §8). */
  @IsString() reason!: string;
  /** The stock hold the failure ends (CONTRACT §4): a hold placed since, under another id, stays. Absent from older producers. */
  @IsOptional() @IsUUID('all') holdId?: string;
}

/** The reason of a `payment-failed` whose checkout was left unpaid until its stock hold ran out, or replaced by a newer one. */
export const CHECKOUT_EXPIRED = 'checkout_expired';

export class PaymentRefundedEvent extends EventEnvelope {
  @Equals('PaymentRefundedEvent')
  declare type: 'PaymentRefundedEvent';

  @IsUUID('all') paymentId!: string;
  @IsUUID('all') userId!: string;
  @IsString() transactionId!: string;
  @amount() @Min(0) amount!: number;
}

/**
 * One refund of a payment succeeded at the provider (CONTRACT §11): a partial one, a cancel's, or
 * the last one that makes the payment REFUNDED (`full`; `payment-refunded` follows in the same
 * transaction). Published once per refund. `items` are the refunded lines valued at their paid unit
 * price (empty for a refund of an amount); `restock` asks the book service to put them back (false
 * for a cancel's refund: `order-cancelled` restocks those).
 */
export class PaymentRefundSucceededEvent extends EventEnvelope {
  @Equals('PaymentRefundSucceededEvent')
  declare type: 'PaymentRefundSucceededEvent';

  @IsUUID('all') refundId!: string;
  @IsUUID('all') paymentId!: string;
  /** Null until the payment service has learnt its order (older producers sent an empty string). */
  @IsOptional() @IsString() orderId!: string | null;
  @IsUUID('all') userId!: string;
  /** This refund's amount. */
  @amount() @Min(0) amount!: number;
  /** What the payment's succeeded refunds add up to, this one included. */
  @amount() @Min(0) refundedAmount!: number;
  /** The payment's amount. */
  @amount() @Min(0) paymentAmount!: number;
  @IsString() reason!: string;
  @IsString() note!: string;
  @EventItems({ atLeastOne: false })
  items!: EventItem[];
  @IsBoolean() restock!: boolean;
  /** True when this refund brought the payment to REFUNDED. */
  @IsBoolean() full!: boolean;
  /** The attempt that succeeded (the refusals before it; absent: 0): a reversal names the same one. */
  @IsOptional() @IsInt() @Min(0) attempt?: number;
}

/**
 * The provider refused an order's refund for good: it waits, FAILED, for an admin to retry it. Or
 * (`reason` `refund_reversed`, with `refundId`) a refund that had succeeded failed after all: it
 * undoes that refund's `payment-refund-succeeded`.
 */
export class PaymentRefundFailedEvent extends EventEnvelope {
  @Equals('PaymentRefundFailedEvent')
  declare type: 'PaymentRefundFailedEvent';

  @IsUUID('all') paymentId!: string;
  /** Null only in a reversal whose payment's order the payment service does not know yet. */
  @IsOptional() @IsUUID('all') orderId!: string | null;
  @IsUUID('all') userId!: string;
  /** A short code safe to show (the provider's error code, e.g. `balance_insufficient`; `refund_reversed`). */
  @IsString() reason!: string;
  /** A reversal's: the refund, the attempt that had succeeded, its amount, what succeeded refunds add up to now. */
  @IsOptional() @IsUUID('all') refundId?: string;
  @IsOptional() @IsInt() @Min(0) attempt?: number;
  @IsOptional() @amount() @Min(0) reversedAmount?: number;
  @IsOptional() @amount() @Min(0) refundedAmount?: number;
  @IsOptional() @amount() @Min(0) paymentAmount?: number;
  /** True when the payment is no longer REFUNDED. */
  @IsOptional() @IsBoolean() full?: boolean;
}

/** Legacy: no producer of ours; analytics accepts it without counting a payment twice. */
export class PaymentCompletedEvent extends EventEnvelope {
  @Equals('PaymentCompletedEvent')
  declare type: 'PaymentCompletedEvent';

  @IsUUID('all') paymentId!: string;
  @IsUUID('all') orderId!: string;
  @IsString() transactionId!: string;
  @amount() @Min(0) amount!: number;
}

/** What every event about one order carries. */
abstract class OrderEvent extends EventEnvelope {
  @IsUUID('all') orderId!: string;
  @IsUUID('all') paymentId!: string;
  @IsUUID('all') userId!: string;

  @EventItems({ atLeastOne: false })
  items!: EventItem[];
}

export class OrderCreatedEvent extends OrderEvent {
  @Equals('OrderCreatedEvent')
  declare type: 'OrderCreatedEvent';

  @amount() @Min(0) totalAmount!: number;
  @IsString() status!: string;
}

/** An order was cancelled (CONTRACT §6): the payment refunds it, the book service puts the stock back. */
export class OrderCancelledEvent extends OrderEvent {
  @Equals('OrderCancelledEvent')
  declare type: 'OrderCancelledEvent';
}

/** An admin (or a cancel) moved an order from one status to another. */
export class OrderStatusChangedEvent extends OrderEvent {
  @Equals('OrderStatusChangedEvent')
  declare type: 'OrderStatusChangedEvent';

  @IsString() previousStatus!: string;
  @IsString() status!: string;
}

/** A sale or an admin's change took a tracked book's stock from above the threshold to at or below it. */
export class BookStockLowEvent extends EventEnvelope {
  @Equals('BookStockLowEvent')
  declare type: 'BookStockLowEvent';

  @IsUUID('all') bookId!: string;
  @IsString() title!: string;
  @IsInt() @Min(0) stock!: number;
  @IsInt() @Min(0) threshold!: number;
}

/** Each topic's payload: what `enqueueEvent` takes and what a consumer of the topic gets. */
export interface TopicPayloads {
  'payment-created': PaymentCreatedEvent;
  'payment-success': PaymentSuccessEvent;
  'payment-failed': PaymentFailedEvent;
  'payment-refunded': PaymentRefundedEvent;
  'payment-refund-failed': PaymentRefundFailedEvent;
  'payment-refund-succeeded': PaymentRefundSucceededEvent;
  'payment-completed': PaymentCompletedEvent;
  'order-created': OrderCreatedEvent;
  'order-cancelled': OrderCancelledEvent;
  'order-status-changed': OrderStatusChangedEvent;
  'book-stock-low': BookStockLowEvent;
  'user-deleted': UserDeletedEvent;
  'email-verified': EmailVerifiedEvent;
  'sessions-revoked': SessionsRevokedEvent;
}

/** Each topic's payload class, whose decorators validate what a consumer receives. */
export const TOPIC_SCHEMAS: { readonly [T in Topic]: new () => TopicPayloads[T] } = {
  'payment-created': PaymentCreatedEvent,
  'payment-success': PaymentSuccessEvent,
  'payment-failed': PaymentFailedEvent,
  'payment-refunded': PaymentRefundedEvent,
  'payment-refund-failed': PaymentRefundFailedEvent,
  'payment-refund-succeeded': PaymentRefundSucceededEvent,
  'payment-completed': PaymentCompletedEvent,
  'order-created': OrderCreatedEvent,
  'order-cancelled': OrderCancelledEvent,
  'order-status-changed': OrderStatusChangedEvent,
  'book-stock-low': BookStockLowEvent,
  'user-deleted': UserDeletedEvent,
  'email-verified': EmailVerifiedEvent,
  'sessions-revoked': SessionsRevokedEvent,
};

/** A topic's payload without the envelope, which the outbox fills in. */
export type EventFields<T extends Topic> = Omit<TopicPayloads[T], keyof EventEnvelope>;

/** The payload classes of `topics`, as a consumer of several topics takes them. */
export function schemasOf(topics: readonly Topic[]): Record<string, new () => EventEnvelope> {
  return Object.fromEntries(topics.map((topic) => [topic, TOPIC_SCHEMAS[topic]]));
}

/** The `type` each topic's events carry: the payload class's name. */
export function eventTypeOf<T extends Topic>(topic: T): TopicPayloads[T]['type'] {
  return TOPIC_SCHEMAS[topic].name as TopicPayloads[T]['type'];
}
