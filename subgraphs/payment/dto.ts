/** Request and response shapes of the payment routes (interface §2.11, CONTRACT §5). */
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsInt, IsObject, IsUUID, Max, Min, ValidateBy, ValidateNested, buildMessage } from 'class-validator';
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

export class CreateCheckoutRequest {
  @IsDefined({ message: 'must not be null' })
  @IsUUID('all', { message: 'must be a UUID' })
  checkoutId!: string;

  @IsDefined({ message: 'must not be null' })
  @IsArray()
  @ArrayMinSize(1, { message: 'must contain at least one item' })
  @ArrayMaxSize(MAX_CART_LINES)
  @NoRepeatedBook()
  // ValidateNested lets an array in the list through (`items: [[]]`): every item must be an object.
  @IsObject({ each: true, message: 'each item must be an object' })
  @ValidateNested({ each: true })
  @Type(() => CheckoutItemRequest)
  items!: CheckoutItemRequest[];
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
}
