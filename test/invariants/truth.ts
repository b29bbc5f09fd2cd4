/**
 * What the runner knows happened, from the answers it got: who is registered, which payment each
 * cart became, which orders it cancelled, which partial refunds an admin made, which refunds it
 * asked the provider's dashboard for, and every answer a client should never see. The checker
 * compares this and the simulator's ledger with what the services report.
 */

/** A partial refund an admin asked for: `refundId` when it answered 201, none when it answered 5xx (it may happen still). */
export interface RefundTruth {
  refundId?: string;
  cents: number;
  items: { bookId: string; quantity: number }[];
  restock: boolean;
}

export interface CartTruth {
  user: number;
  items: { bookId: string; quantity: number }[];
  checkoutId: string;
  paymentId?: string;
  /** The PaymentIntent the last checkout answered with; a checkout held anew after its hold ended gets a new one. */
  intentId?: string;
  /** Every PaymentIntent the payment had, oldest first: at most one of them may succeed. */
  intentIds: string[];
  /** Intents the customer was declined on. */
  declinedIntents: Set<string>;
  /** When the last checkout's stock hold ends (epoch ms), if it holds anything. */
  holdExpiresAt?: number;
  /** The status the last checkout of this cart answered. */
  lastCheckout?: number;
  /** Every paymentId a checkout of this cart answered: more than one breaks checkout idempotency. */
  paymentIds: Set<string>;
  orderId?: string;
  /** A cancel (or an admin's CANCELLED) was accepted. */
  cancelled: boolean;
  /** Partial refunds answered 201 (a refund was made), in the order they were answered. */
  refunds: RefundTruth[];
  /** Partial refunds answered 5xx: parked FAILED and retried, or never made; which one the answer does not say. */
  unanswered: RefundTruth[];
  /** Refunded from the provider's dashboard (not by a cancel). */
  merchantRefunded: boolean;
  declined: boolean;
}

export interface UserTruth {
  email: string;
  password: string;
  /** Registrations of this email answered 200: more than one is a second account. */
  registered: number;
  bearer?: string;
}

export interface BookTruth {
  id: string;
  price: number;
  initialStock?: number;
  /** An admin set its stock (200): the stock it ends at is then known only within bounds. */
  adminChanged: boolean;
}

export interface BadAnswer {
  op: string;
  method: string;
  path: string;
  status: number;
  body: string;
}

export class GroundTruth {
  readonly users = new Map<number, UserTruth>();
  readonly carts = new Map<number, CartTruth>();
  books: BookTruth[] = [];
  readonly badAnswers: BadAnswer[] = [];
  /** Answers that break a rule on the spot (a duplicate registration accepted, a wrong password let in, an op that threw). */
  readonly surprises: string[] = [];
  /** FAILED refunds (refundId → paymentId) whose retry no longer fits what is left (409): refunds made since took the money. */
  readonly unfitRefunds = new Map<string, string>();
  /** Answers by op kind and status, for the report. */
  readonly answers = new Map<string, number>();
  readonly faults = { providerCallsFailed: 0, restarts: 0, heldWebhooks: 0, resends: 0, refundsRefused: 0, refundsRetried: 0 };
  /** Stock under load: checkouts of a rush, checkouts refused for stock, pays raced against a hold's expiry, admin stock changes and refusals. */
  readonly stock = { rushCheckouts: 0, refusedForStock: 0, paidAroundExpiry: 0, stockSet: 0, stockSetRefused: 0 };

  count(kind: string, outcome: string | number): void {
    const key = `${kind} ${outcome}`;
    this.answers.set(key, (this.answers.get(key) ?? 0) + 1);
  }

  /** The answers to one op kind, by status (or `skipped`). */
  answersTo(kind: string): Record<string, number> {
    return Object.fromEntries([...this.answers].filter(([key]) => key.startsWith(`${kind} `)).map(([key, n]) => [key.slice(kind.length + 1), n]));
  }

  /** Carts that became a payment, with their payment. */
  payments(): (CartTruth & { paymentId: string; intentId: string })[] {
    return [...this.carts.values()].filter((cart): cart is CartTruth & { paymentId: string; intentId: string } => cart.paymentId !== undefined && cart.intentId !== undefined);
  }
}
