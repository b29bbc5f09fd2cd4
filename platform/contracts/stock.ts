/**
 * The book service's internal stock routes (CONTRACT §4), called with `X-Internal-Api-Key` and never
 * routed by the gateway: the payment service holds a checkout's copies while it prices the cart, and
 * the order service has a paid payment's copies taken before it confirms the order.
 */
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsOptional, IsUUID, Max, Min, ValidateNested } from 'class-validator';

export const STOCK_ROUTES = {
  hold: '/api/books/internal/holds',
  release: '/api/books/internal/holds/release',
  commit: '/api/books/internal/stock/commit',
} as const;

export class StockLineDto {
  @IsUUID('all') bookId!: string;
  @IsInt() @Min(1) @Max(1_000_000) quantity!: number;
}

class StockLinesDto {
  @IsUUID('all') paymentId!: string;
  @IsUUID('all') userId!: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => StockLineDto)
  items!: StockLineDto[];
}

/** Holds the tracked lines of a checkout; the same `holdId` again holds nothing twice. */
export class StockHoldRequest extends StockLinesDto {
  @IsUUID('all') holdId!: string;
}

/** Ends a payment's hold (its payment failed or was cancelled); with `holdId`, only that hold. */
export class StockReleaseRequest {
  @IsUUID('all') paymentId!: string;
  @IsOptional() @IsUUID('all') holdId?: string;
}

/** Takes a paid payment's copies (its held ones, or what is free), all or none; once per payment. */
export class StockCommitRequest extends StockLinesDto {}

/** A book as the hold answers it: what the checkout prices the line with. */
export interface HeldBook {
  id: string;
  title: string;
  price: number;
  /** Null when the book's stock is not tracked (nothing is held of it). */
  stock: number | null;
}

export interface StockHoldResponse {
  /** The books of the request, in its order. */
  books: HeldBook[];
  /** When the hold ends unless paid; null when no line is of a tracked book (nothing to hold). */
  expiresAt: string | null;
  /** The customer's earlier unpaid checkouts whose holds this one replaced (their payments are to be cancelled). */
  replacedPaymentIds: string[];
}

export interface StockShortage {
  bookId: string;
  title: string;
  quantity: number;
  /** Copies that were free for this payment when its order looked. */
  left: number;
}

export interface StockCommitResponse {
  /** True when every copy was taken; false when some were missing and none was taken. */
  filled: boolean;
  shortages: StockShortage[];
}
