/** Request and response shapes of the payment routes (interface §2.11, CONTRACT §5). */
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  Max,
  Min,
  ValidateBy,
  ValidateNested,
  buildMessage,
} from 'class-validator';
import type { PaymentStatus } from './entities';
import type { RefundResponse } from './refunds';

export const MAX_CART_LINES = 100;

export class CheckoutItemRequest {
  @IsDefined({ message: 'must not be null' })
  @IsUUID('all', { message: 'must be a UUID' })
  bookId!: string;

  @IsDefined({ message: 'must not be null' })
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(2000)
  quantity!: number;
}

function NoRepeatedBook(): PropertyDecorator {
  return ValidateBy({
    name: 'noRepeatedBook',
    validator: {
      validate: (items: unknown) => {
        if (!Array.isArray(items)) return true;
        const ids = (items as unknown[]).map((item) => {
          const id = (item as { bookId?: unknown } | null | undefined)?.bookId;
          return typeof id === 'string' ? id.toLowerCase() : id;
        });
        return new Set(ids).size === ids.length;
      },
      defaultMessage: buildMessage(() => 'must not list the same bookId twice'),
    },
  });
}

/** Lines of books: 1 to MAX_CART_LINES objects `{ bookId, quantity }`, no book twice. */
function BookLines(): PropertyDecorator {
  const decorators = [
    IsArray(),
    ArrayMinSize(1, { message: 'must contain at least one item' }),
    ArrayMaxSize(MAX_CART_LINES),
    NoRepeatedBook(),
    // ValidateNested lets an array in the list through (`items: [[]]`): every item must be an object.
    IsObject({ each: true, message: 'each item must be an object' }),
    ValidateNested({ each: true }),
    Type(() => CheckoutItemRequest),
  ];
  return (target, property) => {
    for (const decorate of decorators) decorate(target, property);
  };
}

export class CreateCheckoutRequest {
  @IsDefined({ message: 'must not be null' })
  @IsUUID('all', { message: 'must be a UUID' })
  checkoutId!: string;

  @IsDefined({ message: 'must not be null' })
  @BookLines()
  items!: CheckoutItemRequest[];
}

export const REFUND_REASONS = ['REQUESTED_BY_CUSTOMER', 'DAMAGED', 'DUPLICATE', 'FRAUDULENT', 'OTHER'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

/** A refund an ADMIN makes (CONTRACT §11): exactly one of `amount` or `items` (checked by the service, which knows the payment). */
export class CreateRefundRequest {
  @IsOptional()
  @IsNumber({ maxDecimalPlaces: 2, allowNaN: false, allowInfinity: false }, { message: 'must be a number with at most 2 decimals' })
  @Min(0.01)
  amount?: number;

  @IsOptional()
  @BookLines()
  items?: CheckoutItemRequest[];

  @IsDefined({ message: 'must not be null' })
  @IsIn(REFUND_REASONS, { message: `must be one of ${REFUND_REASONS.join(', ')}` })
  reason!: RefundReason;

  @IsOptional()
  @IsString()
  @MaxLength(500)
  note?: string;

  @IsOptional()
  @IsBoolean()
  restock?: boolean;
}

export interface PaymentItemResponse {
  bookId: string;
  bookTitle: string;
  quantity: number;
  /** Unit price. */
  price: number;
}

export interface PaymentResponse {
  paymentId: string;
  checkoutId: string;
  orderId: string | null;
  amount: number;
  status: PaymentStatus;
  paymentIntentId: string;
  clientSecret: string;
  items: PaymentItemResponse[];
  /** What came back to the buyer: the whole amount once REFUNDED, else the refunds that succeeded. */
  refundedAmount: number;
  refunds: RefundResponse[];
  /** Why a FAILED payment failed: the provider's code (`card_declined`, ...), or `checkout_expired` when its stock hold ran out unpaid; else null. */
  failureReason: string | null;
  /** Until when the copies of the cart's tracked books are held for it, while PAYMENT_PENDING; else null (CONTRACT §4). */
  holdExpiresAt: string | null;
}
