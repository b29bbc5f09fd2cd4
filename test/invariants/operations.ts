/**
 * The workload's vocabulary: each operation names users, books and carts by index, so a list of
 * them is plain data that the generator writes, the runner plays, the shrinker cuts and a failure prints.
 */

/** Services a restart op may stop and start again on the same database and bus (full setup only). */
export const RESTARTABLE = ['order', 'payment', 'analytics', 'book'] as const;
export type Restartable = (typeof RESTARTABLE)[number];

export type AdminStatus = 'PROCESSING' | 'SHIPPED' | 'DELIVERED' | 'CANCELLED';
export type ResentEvent = 'payment_intent.succeeded' | 'payment_intent.payment_failed' | 'charge.refunded';

export type PartialRefund = { cents: number } | { line: number; quantity: number; restock: boolean };

export type Operation =
  /** Registers user `user` (a second one with the same index is a duplicate: 409) and logs in. */
  | { kind: 'register'; wave: number; user: number }
  | { kind: 'login'; wave: number; user: number; wrongPassword: boolean }
  /** Checkout of cart `cart` (its user, items and checkoutId are fixed by the first op naming it; a repeat must give the same payment). */
  | { kind: 'checkout'; wave: number; cart: number; user: number; items: { book: number; quantity: number }[]; rush?: boolean }
  /** The customer pays or is declined at the simulator, which sends the signed webhook. */
  | { kind: 'pay'; wave: number; cart: number }
  /** The customer pays `offsetMs` from the moment the cart's stock hold expires (before it when negative), racing the expiry sweep. */
  | { kind: 'payAtExpiry'; wave: number; cart: number; offsetMs: number }
  /** An admin sets a tracked book's stock to what it reads plus `delta` (refused, 409, below the copies held). */
  | { kind: 'setStock'; wave: number; book: number; delta: number }
  | { kind: 'decline'; wave: number; cart: number }
  | { kind: 'cancel'; wave: number; cart: number; asAdmin: boolean }
  | { kind: 'setStatus'; wave: number; cart: number; status: AdminStatus }
  /** The simulator delivers the cart's latest event of that type again (a duplicate, possibly after newer ones). */
  | { kind: 'resend'; wave: number; cart: number; event: ResentEvent }
  /** Webhooks about the cart's PaymentIntent are held back until `release`, which delivers them newest first. */
  | { kind: 'hold'; wave: number; cart: number }
  | { kind: 'release'; wave: number; cart: number }
  /** An admin refunds part of the cart's payment (CONTRACT §11): an amount in cents, or copies of one of its lines, put back in stock or not. */
  | { kind: 'partialRefund'; wave: number; cart: number; refund: PartialRefund }
  /** An admin refunds `cents` of the cart's payment, the provider takes it as pending, and the bank then fails it (FAILED until an admin's retry). */
  | { kind: 'bankFailsRefund'; wave: number; cart: number; cents: number }
  /** A refund from the provider's dashboard, not from a cancel. */
  | { kind: 'merchantRefund'; wave: number; cart: number }
  /** The provider's next `failNext` API calls answer 500 (passing: retried). */
  | { kind: 'fault'; wave: number; failNext: number }
  /** The provider refuses its next `refunds` refunds for good (402 balance_insufficient): each is parked FAILED for an admin. */
  | { kind: 'refuse'; wave: number; refunds: number }
  /** An admin retries every refund the failed-refunds list shows. */
  | { kind: 'retryRefunds'; wave: number }
  | { kind: 'restart'; wave: number; service: Restartable };

/** One readable line per operation, as a failure prints it. */
export function describe(op: Operation): string {
  const at = `w${op.wave}`;
  switch (op.kind) {
    case 'register':
      return `${at} register user${op.user}`;
    case 'login':
      return `${at} login user${op.user}${op.wrongPassword ? ' (wrong password)' : ''}`;
    case 'checkout':
      return `${at} ${op.rush ? 'rush ' : ''}checkout cart${op.cart} by user${op.user}: ${op.items.map((i) => `${i.quantity}× book${i.book}`).join(', ')}`;
    case 'cancel':
      return `${at} cancel cart${op.cart}${op.asAdmin ? ' as admin' : ''}`;
    case 'setStatus':
      return `${at} admin sets cart${op.cart} ${op.status}`;
    case 'resend':
      return `${at} resend ${op.event} of cart${op.cart}`;
    case 'fault':
      return `${at} provider fails next ${op.failNext} calls with 500`;
    case 'payAtExpiry':
      return `${at} pay cart${op.cart} ${Math.abs(op.offsetMs)} ms ${op.offsetMs < 0 ? 'before' : 'after'} its hold expires`;
    case 'setStock':
      return `${at} admin sets book${op.book}'s stock ${op.delta > 0 ? '+' : ''}${op.delta}`;
    case 'restart':
      return `${at} restart ${op.service}`;
    case 'bankFailsRefund':
      return `${at} admin refunds ${(op.cents / 100).toFixed(2)} of cart${op.cart}, pending, then the bank fails it`;
    case 'refuse':
      return `${at} provider refuses the next ${op.refunds} refunds for good`;
    case 'retryRefunds':
      return `${at} admin retries the failed refunds`;
    case 'partialRefund':
      return 'cents' in op.refund
        ? `${at} admin refunds ${(op.refund.cents / 100).toFixed(2)} of cart${op.cart}`
        : `${at} admin refunds ${op.refund.quantity}× line${op.refund.line} of cart${op.cart}${op.refund.restock ? ', restocked' : ''}`;
    default:
      return `${at} ${op.kind} cart${op.cart}`;
  }
}

export const describeAll = (ops: readonly Operation[]): string => ops.map((op) => `  ${describe(op)}`).join('\n');
