/**
 * Writes a workload from a seed: the catalogue it runs against and waves of operations. The same
 * seed gives the same list, so a failure is replayed (and shrunk) from its seed alone.
 */
import { RESTARTABLE, type AdminStatus, type Operation, type PartialRefund, type ResentEvent } from './operations';

/** mulberry32: small, seedable, good enough to pick operations. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface BookPlan {
  price: number;
  /** undefined: stock not tracked. */
  stock?: number;
}

export interface Workload {
  seed: number;
  books: BookPlan[];
  ops: Operation[];
}

export interface GenerateOptions {
  /** Stop and start services mid-run (needs a database and bus that outlive a service: MariaDB + Kafka). */
  restarts?: boolean;
}

interface CartPlan {
  user: number;
  items: { book: number; quantity: number }[];
  /** The waves of its first checkout and of its `pay` (a pay in the checkout's wave finds no payment yet). */
  checkoutWave: number;
  paidWave?: number;
  paid: boolean;
  cancelled: boolean;
  /** Refunded from the provider's dashboard: no admin refunds it in part. */
  dashboard: boolean;
}

export function generate(seed: number, count: number, options: GenerateOptions = {}): Workload {
  const random = prng(seed);
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(list: readonly T[]): T => list[int(0, list.length - 1)];
  const chance = (p: number) => random() < p;

  // Books with stock near zero, plenty, and untracked; prices with cents so sums are exact only in cents.
  const books: BookPlan[] = [
    { price: 12.5, stock: 1 },
    { price: 9.99, stock: 2 },
    { price: 30, stock: 3 },
    { price: 4.25, stock: 40 },
    { price: 19.95, stock: 100 },
    { price: 7.1 },
  ];
  const ops: Operation[] = [];
  const users: number[] = [];
  const carts: CartPlan[] = [];
  const scheduled = new Map<number, Operation[]>();
  const schedule = (op: Operation) => scheduled.set(op.wave, [...(scheduled.get(op.wave) ?? []), op]);
  const cartWhere = (predicate: (cart: CartPlan) => boolean) => {
    const matching = carts.map((cart, index) => ({ cart, index })).filter(({ cart }) => predicate(cart));
    return matching.length === 0 ? undefined : pick(matching);
  };

  // An amount (now and then the whole payment, which refunds it in full), or copies of one line.
  const partialRefund = (cart: CartPlan): PartialRefund => {
    if (chance(0.5)) {
      const total = cart.items.reduce((sum, item) => sum + Math.round(books[item.book].price * 100) * item.quantity, 0);
      return { cents: chance(0.15) ? total : int(1, Math.max(1, Math.floor(total / 2))) };
    }
    const line = int(0, cart.items.length - 1);
    return { line, quantity: int(1, cart.items[line].quantity), restock: chance(0.5) };
  };

  const choices: [number, (wave: number) => Operation | Operation[] | undefined][] = [
    [
      8,
      (wave) => {
        const user = users.length > 0 && chance(0.15) ? pick(users) : users.length;
        if (!users.includes(user)) users.push(user);
        return { kind: 'register', wave, user };
      },
    ],
    [4, (wave) => (users.length === 0 ? undefined : { kind: 'login', wave, user: pick(users), wrongPassword: chance(0.5) })],
    [
      20,
      (wave) => {
        const again = chance(0.2) ? cartWhere(() => true) : undefined;
        if (again) return { kind: 'checkout', wave, cart: again.index, user: again.cart.user, items: again.cart.items };
        if (users.length === 0) return undefined;
        const items = [{ book: int(0, books.length - 1), quantity: chance(0.15) ? int(3, 6) : int(1, 2) }];
        if (chance(0.3)) {
          const other = int(0, books.length - 1);
          if (other !== items[0].book) items.push({ book: other, quantity: 1 });
        }
        carts.push({ user: pick(users), items, checkoutWave: wave, paid: false, cancelled: false, dashboard: false });
        const cart = carts.length - 1;
        const op: Operation = { kind: 'checkout', wave, cart, user: carts[cart].user, items };
        // The same checkout sent twice at once: exactly one payment.
        return chance(0.2) ? [op, { ...op }] : op;
      },
    ],
    [
      18,
      (wave) => {
        const found = cartWhere((cart) => !cart.paid);
        if (!found) return undefined;
        found.cart.paid = true;
        found.cart.paidWave = wave;
        return { kind: 'pay', wave, cart: found.index };
      },
    ],
    [
      5,
      (wave) => {
        const found = cartWhere((cart) => !cart.paid);
        return found && { kind: 'decline', wave, cart: found.index };
      },
    ],
    [
      8,
      (wave) => {
        const found = cartWhere((cart) => cart.paid);
        if (!found) return undefined;
        found.cart.cancelled = true;
        // Now and then the owner and an admin cancel the same order at once.
        const op: Operation = { kind: 'cancel', wave, cart: found.index, asAdmin: chance(0.3) };
        return chance(0.15) ? [op, { ...op, asAdmin: !op.asAdmin }] : op;
      },
    ],
    [
      3,
      (wave) => {
        // A burst of cancels, so they reach the payment consumer as one batch.
        const paid = carts.map((cart, index) => ({ cart, index })).filter(({ cart }) => cart.paid && !cart.cancelled);
        if (paid.length < 3) return undefined;
        return paid.slice(-6).map(({ cart, index }) => {
          cart.cancelled = true;
          return { kind: 'cancel', wave, cart: index, asAdmin: false };
        });
      },
    ],
    [
      6,
      (wave) => {
        const found = cartWhere((cart) => cart.paid);
        if (!found) return undefined;
        const status = pick<AdminStatus>(['PROCESSING', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'CANCELLED']);
        if (status === 'CANCELLED') found.cart.cancelled = true;
        return { kind: 'setStatus', wave, cart: found.index, status };
      },
    ],
    [
      6,
      (wave) => {
        const found = cartWhere((cart) => cart.paid || cart.cancelled);
        return (
          found && {
            kind: 'resend',
            wave,
            cart: found.index,
            event: pick<ResentEvent>(['payment_intent.succeeded', 'payment_intent.succeeded', 'payment_intent.payment_failed', 'charge.refunded']),
          }
        );
      },
    ],
    [
      2,
      (wave) => {
        // Reordered webhooks: paid, then refunded from the provider's dashboard, the refund delivered first.
        const found = cartWhere((cart) => !cart.paid);
        if (!found) return undefined;
        found.cart.paid = true;
        found.cart.cancelled = true;
        found.cart.dashboard = true;
        schedule({ kind: 'pay', wave: wave + 1, cart: found.index });
        schedule({ kind: 'merchantRefund', wave: wave + 2, cart: found.index });
        schedule({ kind: 'release', wave: wave + 3, cart: found.index });
        return { kind: 'hold', wave, cart: found.index };
      },
    ],
    [
      6,
      (wave) => {
        // An admin's refund of part of a paid order, mostly one paid in an earlier wave and not cancelled
        // (so that most are made, not refused); now and then two at once for the same payment, or one
        // racing the order's cancel.
        const paidBefore = (cart: CartPlan) => cart.paidWave !== undefined && cart.checkoutWave < cart.paidWave && cart.paidWave < wave && !cart.cancelled;
        const anyPaid = chance(0.2);
        const found = cartWhere((cart) => cart.paid && !cart.dashboard && (anyPaid || paidBefore(cart)));
        if (!found) return undefined;
        const op: Operation = { kind: 'partialRefund', wave, cart: found.index, refund: partialRefund(found.cart) };
        if (chance(0.25)) return [op, { kind: 'partialRefund', wave, cart: found.index, refund: partialRefund(found.cart) }];
        if (!chance(0.2)) return op;
        found.cart.cancelled = true;
        return [op, { kind: 'cancel', wave, cart: found.index, asAdmin: chance(0.5) }];
      },
    ],
    [
      2,
      (wave) => {
        // A rush: customers check out the same scarce book at once, and all pay at once next.
        const book = int(0, 2);
        const rushers = [...new Set(users)].sort(() => random() - 0.5).slice(0, int(4, 10));
        if (rushers.length < 3) return undefined;
        return rushers.map((user) => {
          const items = [{ book, quantity: 1 }];
          carts.push({ user, items, checkoutWave: wave, paid: true, paidWave: wave + 1, cancelled: false, dashboard: false });
          const cart = carts.length - 1;
          schedule({ kind: 'pay', wave: wave + 1, cart });
          return { kind: 'checkout', wave, cart, user, items, rush: true };
        });
      },
    ],
    [
      3,
      (wave) => {
        // A pay just before or just after the hold expires, racing the sweep that cancels the intent.
        const found = cartWhere((cart) => !cart.paid);
        if (!found) return undefined;
        found.cart.paid = true;
        found.cart.paidWave = wave;
        return { kind: 'payAtExpiry', wave, cart: found.index, offsetMs: int(-400, 400) };
      },
    ],
    [
      2,
      (wave) => {
        const delta = chance(0.5) ? -int(1, 2) : int(1, 3);
        return { kind: 'setStock', wave, book: int(0, 4), delta };
      },
    ],
    [2, (wave) => ({ kind: 'fault', wave, failNext: int(1, 3) })],
    [1, (wave) => ({ kind: 'refuse', wave, refunds: int(1, 2) })],
    [
      2,
      (wave) => {
        const found = cartWhere((cart) => cart.paid && !cart.dashboard && !cart.cancelled);
        return found ? { kind: 'bankFailsRefund', wave, cart: found.index, cents: int(100, 500) } : undefined;
      },
    ],
    [2, (wave) => ({ kind: 'retryRefunds', wave })],
  ];
  const totalWeight = choices.reduce((sum, [weight]) => sum + weight, 0);

  for (let wave = 0; ops.length < count || scheduled.size > 0; wave += 1) {
    const waveOps = [...(scheduled.get(wave) ?? [])];
    scheduled.delete(wave);
    if (ops.length >= count) {
      ops.push(...waveOps);
      continue;
    }
    if (options.restarts && wave > 2 && waveOps.length === 0 && chance(0.06)) {
      // Alone in its wave, so its downtime (503s from the gateway) is the only thing in flight.
      ops.push({ kind: 'restart', wave, service: pick(RESTARTABLE) });
      continue;
    }
    // The first wave registers everyone the run starts with.
    const size = wave === 0 ? 6 : int(5, 20);
    while (waveOps.length < size) {
      let roll = random() * totalWeight;
      const [, make] = choices.find(([weight]) => (roll -= weight) < 0) ?? choices[0];
      const made = wave === 0 ? choices[0][1](wave) : make(wave);
      if (made) waveOps.push(...(Array.isArray(made) ? made : [made]));
    }
    ops.push(...waveOps);
  }
  return { seed, books, ops };
}
