/**
 * The invariants, checked once the run has settled, against the simulator's ledger (the provider's
 * truth, which we did not write) and the runner's ground truth. What they mean precisely:
 *
 * - refunds (CONTRACT §11): what a paid payment reports refunded equals what the provider's succeeded
 *   refunds of its intent add up to (refunds pending at the provider that the bank then fails, the
 *   workload's `bankFailsRefund`, included); an intent's succeeded refunds never add up to more than its amount; each
 *   partial refund answered 201 is at the provider exactly once (by metadata.refundId), at its amount;
 *   beyond those, at most one refund for the cancel's part (the rest of a cancelled order) and one per
 *   partial refund answered 5xx, and one without a refundId only from the provider's dashboard (a
 *   `merchantRefund` op); a cancelled order whose payment succeeded ends refunded in full (a cancel's
 *   refund refused for now keeps what it is for until its retry, so no partial refund takes it); an
 *   order never cancelled is refunded exactly what its 201s say, but for a partial refund left FAILED
 *   because refunds made since took what it was for (its retry is a 409). A FAILED refund whose retry
 *   fits again must not outlive the settling.
 * - payments: one payment per checkoutId, and at most one of its PaymentIntents (a checkout held anew
 *   after its stock hold ended gets a new one) succeeded; the payment's status follows the ledger:
 *   succeeded and refunded in full → REFUNDED, succeeded → SUCCESS (partly refunded included), its
 *   last intent declined or cancelled (the hold ran out, or a newer checkout replaced it) → FAILED,
 *   else PAYMENT_PENDING.
 * - orders: at most one order per payment; a succeeded payment not refunded in full has exactly one,
 *   live (not CANCELLED/REFUNDED) and with no refundStatus (a partial refund changes neither); a
 *   payment of a cancelled order keeps its one order, CANCELLED; a payment refunded in full otherwise
 *   (admin refunds adding up, the dashboard) has no live order (none, REFUNDED or CANCELLED); a
 *   payment that never succeeded has none; no order names a payment nobody made.
 * - orders and stock (CONTRACT §4): a succeeded payment ends with an order that took all its copies,
 *   or with an order made CANCELLED "Out of stock" and a full refund at the provider; per tracked
 *   book, exactly, stock = initial − what the filled orders keep (an order's copies less its
 *   restocked refunds'; none for a cancelled one, whose cancel puts all back), up to the copies of
 *   restocked refunds answered 5xx; so the copies orders keep never exceed the initial stock, and
 *   stock never goes below 0. A book whose stock an admin set is held only to stock ≥ 0.
 * - holds: held copies never exceed the stock, and available = stock − held.
 * - analytics (CONTRACT §8, §11): totalOrders = payments created; paidOrders over succeeded
 *   payments not refunded in full, totalRevenue their amounts less their refunds at the provider,
 *   booksSold their copies less those of their partial refunds (a range when an item refund answered
 *   5xx); failedPayments = declined, never succeeded; refundedPayments/refundedAmount = refunded in
 *   full (a range when a dashboard refund may have been seen before its success, which analytics
 *   then never counts as paid).
 * - health: no 5xx the contract does not allow, no surprise answer, every service UP, no error-level log line
 *   but the alert for a refund the provider refused for good (the workload's `refuse` operations).
 */
import type { PaymentIntent, Refund } from '../../simulators/stripe/simulator';
import { REFUND_PARKED_ALERT } from '../../subgraphs/payment/refunds';
import { waitFor } from '../wait';
import { retryFailedRefunds } from './runner';
import type { CartTruth, RefundTruth } from './truth';
import type { World } from './world';

export interface Violation {
  invariant: string;
  detail: string;
}

export interface CheckResult {
  violations: Violation[];
  /** Invariant instances checked (one per payment, book, figure...). */
  checked: Record<string, number>;
}

type Json = Record<string, unknown>;
const LIVE = ['CONFIRMED', 'PROCESSING', 'SHIPPED', 'DELIVERED'];
const cents = (amount: unknown) => Math.round(Number(amount) * 100);

async function get(world: World, path: string, bearer = world.adminBearer, base = world.gateway.url): Promise<{ status: number; body: Json & Json[] }> {
  const response = await fetch(`${base}${path}`, { headers: bearer ? { authorization: bearer } : {} });
  const text = await response.text();
  return { status: response.status, body: (text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : { text }) as Json & Json[] };
}

export async function checkOnce(world: World): Promise<CheckResult> {
  const { truth } = world;
  const violations: Violation[] = [];
  const checked: Record<string, number> = {};
  const expect = (invariant: string, ok: boolean, detail: () => string) => {
    checked[invariant] = (checked[invariant] ?? 0) + 1;
    if (!ok) violations.push({ invariant, detail: detail() });
  };
  const intents = new Map<string, PaymentIntent>(world.stack.stripe!.intents().map((intent) => [intent.id, intent]));
  const refunds = world.stack.stripe!.refunds().filter((refund: Refund) => refund.status === 'succeeded');
  const orders: Json[] = [];
  for (let page: Json[] = []; orders.length === 0 || page.length === 200; orders.push(...page)) {
    const res = await get(world, `/api/orders?limit=200&offset=${orders.length}`);
    if (res.status !== 200) throw new Error(`GET /api/orders answered ${res.status}`);
    page = res.body;
    if (page.length === 0) break;
  }
  const cartName = new Map<CartTruth, string>([...truth.carts.entries()].map(([index, cart]) => [cart, `cart${index}`]));

  const facts = truth.payments().map((cart) => {
    // A checkout held anew has had several intents, each cancelled before the next: at most one succeeded.
    const own = cart.intentIds.flatMap((id) => intents.get(id) ?? []);
    const paid = own.filter((candidate) => candidate.status === 'succeeded');
    expect('payments', paid.length <= 1, () => `cart${[...truth.carts.values()].indexOf(cart)}: ${paid.length} of its intents succeeded`);
    const last = own[own.length - 1];
    const intent = paid[0] ?? last;
    const succeeded = paid.length > 0;
    const atProvider = refunds.filter((refund) => refund.payment_intent === intent?.id);
    const refundedCents = atProvider.reduce((sum, refund) => sum + refund.amount, 0);
    // Refunded in full: by its refunds adding up to its amount (partial, a cancel's, the dashboard's).
    const refunded = succeeded && refundedCents === intent.amount;
    // The 201 refunds but those left FAILED because a retry no longer fits (CONTRACT §11).
    const settled = cart.refunds.filter((refund) => !truth.unfitRefunds.has(refund.refundId!));
    // Not paid: FAILED once its last intent was declined or cancelled (its hold ran out, or it was replaced).
    const ended = !succeeded && last !== undefined && (last.status === 'canceled' || cart.declinedIntents.has(last.id));
    return { cart, name: cartName.get(cart)!, intent, succeeded, ended, atProvider, refundedCents, refunded, settled };
  });

  for (const { cart, name, intent, succeeded, ended, atProvider, refundedCents, refunded, settled } of facts) {
    const amount = intent?.amount ?? 0;
    const own = orders.filter((order) => order.paymentId === cart.paymentId);
    // An order made cancelled because its copies were gone is refunded as a cancel is (CONTRACT §4).
    const unfilled = own.filter((order) => order.cancellationReason !== null);
    const cancelled = cart.cancelled || unfilled.length > 0;
    expect('refunds', refundedCents <= amount, () => `${name}: refunded ${refundedCents} cents at the provider of a ${amount}-cent payment`);
    const made = new Set(cart.refunds.map((refund) => refund.refundId));
    for (const { refundId, cents } of cart.refunds) {
      const found = atProvider.filter((refund) => refund.metadata.refundId === refundId);
      const once = settled.some((refund) => refund.refundId === refundId);
      expect(
        'refunds',
        once ? found.length === 1 && found[0].amount === cents : found.length === 0,
        () => `${name}: partial refund ${refundId} (201, ${cents} cents${once ? '' : ', FAILED for good'}) is at the provider as [${found.map((r) => r.amount).join(', ')}]`,
      );
    }
    const others = atProvider.filter((refund) => !made.has(refund.metadata.refundId));
    const dashboard = others.filter((refund) => !refund.metadata.refundId).length;
    const product = others.length - dashboard;
    expect(
      'refunds',
      dashboard <= (cart.merchantRefunded ? 1 : 0),
      () => `${name}: ${dashboard} refunds at the provider without a refundId, ${cart.merchantRefunded ? 'one' : 'no'} dashboard refund`,
    );
    // Beyond the 201 refunds: the cancel's refund of what is left, and the partial refunds whose answer was a 5xx.
    expect(
      'refunds',
      product <= (cancelled ? 1 : 0) + cart.unanswered.length,
      () => `${name}: ${product} refunds at the provider that no 201 answered${cancelled ? ', one cancel' : ', no cancel'}, ${cart.unanswered.length} unanswered refunds`,
    );
    if (cancelled && succeeded) {
      expect('refunds', refunded, () => `${name}: cancelled paid order refunded ${refundedCents} of ${amount} cents at the provider`);
    }
    const askedCents = settled.reduce((sum, refund) => sum + refund.cents, 0);
    if (succeeded && !cancelled && !cart.merchantRefunded && cart.unanswered.length === 0) {
      expect('refunds', refundedCents === askedCents, () => `${name}: refunded ${refundedCents} cents at the provider, the 201 partial refunds add up to ${askedCents}`);
    }

    expect('payments', cart.paymentIds.size === 1, () => `${name}: one checkoutId gave payments ${[...cart.paymentIds].join(', ')}`);
    const payment = await get(world, `/api/payments/${cart.paymentId}`, truth.users.get(cart.user)?.bearer);
    const status = succeeded ? (refunded ? 'REFUNDED' : 'SUCCESS') : ended ? 'FAILED' : 'PAYMENT_PENDING';
    // Held anew, its new intent not made (the provider failed, 502): the payment waits unseen for a retry.
    const unseen = payment.status === 404 && cart.lastCheckout === 502 && !succeeded;
    expect(
      'payments',
      unseen || payment.body.status === status,
      () =>
        `${name}: payment ${cart.paymentId} is ${String(payment.body.status)} (${String(payment.body.failureReason)}, intent ${String(payment.body.paymentIntentId)}, hold until ${String(payment.body.holdExpiresAt)}), the ledger says ${status} (intents ${cart.intentIds.map((id) => `${id} ${intents.get(id)?.status}`).join(', ')}; last checkout ${String(cart.lastCheckout)})`,
    );
    // What we report refunded is what the provider's refunds that succeeded add up to, pending ones that failed included.
    expect(
      'refunds',
      unseen || !succeeded || cents(payment.body.refundedAmount) === refundedCents,
      () => `${name}: payment ${cart.paymentId} reports ${String(payment.body.refundedAmount)} refunded, the provider's succeeded refunds add up to ${refundedCents} cents`,
    );

    const statuses = own.map((order) => String(order.status));
    const partly = refundedCents > 0 && !refunded ? `, ${refundedCents} cents refunded` : '';
    const shown = `${name}: payment ${succeeded ? 'succeeded' : 'not succeeded'}${refunded ? ', refunded' : partly}${cart.cancelled ? ', cancelled' : ''}, orders [${statuses.join(', ')}]`;
    if (unfilled.length > 0) {
      // Paid when its copies were gone (CONTRACT §4): refunded in full, its order cancelled with the reason.
      expect(
        'orders',
        own.length === 1 && statuses[0] === 'CANCELLED' && String(unfilled[0].cancellationReason).startsWith('Out of stock: '),
        () => `${shown}: an unfilled order must be the payment's only one, CANCELLED, out of stock`,
      );
      expect('refunds', refunded, () => `${shown}: an unfilled order's payment refunded ${refundedCents} of ${amount} cents at the provider`);
    }
    if (!succeeded) expect('orders', own.length === 0, () => `${shown}: an order without a successful payment`);
    else if (unfilled.length > 0) {
      // Checked above.
    } else if (cart.cancelled) expect('orders', own.length === 1 && statuses[0] === 'CANCELLED', () => `${shown}: expected one CANCELLED order`);
    else if (!refunded) {
      // A partial refund changes neither the order's status nor its refundStatus.
      expect(
        'orders',
        own.length === 1 && LIVE.includes(statuses[0]) && own[0].refundStatus === null,
        () => `${shown}, refundStatus ${String(own[0]?.refundStatus)}: expected one live order, no refundStatus`,
      );
    } else expect('orders', own.length <= 1 && !statuses.some((s) => LIVE.includes(s)), () => `${shown}: a refunded payment keeps a live order`);
  }
  const known = new Set(facts.map((fact) => fact.cart.paymentId));
  for (const order of orders) expect('orders', known.has(order.paymentId as string), () => `order ${String(order.orderId)} for a payment nobody made: ${String(order.paymentId)}`);

  const copiesOf = (refunds: RefundTruth[], bookId?: string) =>
    refunds.flatMap((refund) => refund.items).reduce((sum, item) => sum + (bookId === undefined || item.bookId === bookId ? item.quantity : 0), 0);
  // The orders that took their copies: every order but those made cancelled because their copies were gone.
  const filled = orders.filter((order) => order.cancellationReason === null);
  const factOf = new Map(facts.map((fact) => [fact.cart.paymentId, fact]));
  for (const book of truth.books) {
    if (book.initialStock === undefined) continue;
    const read = (await get(world, `/api/books/${book.id}`, '')).body;
    const stock = Number(read.stock);
    expect(
      'holds',
      Number(read.heldStock) <= stock && Number(read.availableStock) === stock - Number(read.heldStock),
      () => `book ${book.id}: ${String(read.heldStock)} held of ${stock}, ${String(read.availableStock)} available`,
    );
    const quantity = (items: { bookId: string; quantity: number }[]) => items.filter((item) => item.bookId === book.id).reduce((sum, item) => sum + item.quantity, 0);
    let taken = 0;
    let kept = 0;
    let maybe = 0;
    for (const order of filled) {
      const copies = quantity(order.items as { bookId: string; quantity: number }[]);
      if (copies === 0) continue;
      taken += copies;
      const fact = factOf.get(order.paymentId as string);
      // A cancel puts back all the order's copies (those its restocked refunds did not already); otherwise its restocked refunds' copies came back.
      if (order.status === 'CANCELLED') continue;
      const restocked = fact
        ? copiesOf(
            fact.settled.filter((refund) => refund.restock),
            book.id,
          )
        : 0;
      kept += copies - restocked;
      // Restocked refunds answered 5xx may or may not have put their copies back.
      maybe += fact
        ? copiesOf(
            fact.cart.unanswered.filter((refund) => refund.restock),
            book.id,
          )
        : 0;
    }
    // Copies taken never exceed what was on the shelf: the initial stock and what came back.
    expect('stock', stock >= 0 && (book.adminChanged || kept - maybe <= book.initialStock), () => `book ${book.id}: stock ${stock}, orders keep ${kept} of ${book.initialStock}`);
    if (!book.adminChanged) {
      const expected = book.initialStock - kept;
      expect(
        'stock',
        stock >= expected && stock <= expected + maybe,
        () => `book ${book.id}: stock ${stock}, expected ${book.initialStock} − ${kept} kept by orders (${taken} taken) = ${expected}${maybe ? ` (+ up to ${maybe})` : ''}`,
      );
    }
  }

  // Payments still paid count net of their refunds: revenue less every refund at the provider, copies less those refunded.
  const live = facts.filter((fact) => fact.succeeded && !fact.refunded);
  const paidOrders = live.length;
  const revenueCents = live.reduce((sum, fact) => sum + (fact.intent?.amount ?? 0) - fact.refundedCents, 0);
  const booksSold = live.reduce((sum, fact) => sum + fact.cart.items.reduce((n, item) => n + item.quantity, 0) - copiesOf(fact.settled), 0);
  const maybeUnsold = live.reduce((sum, fact) => sum + copiesOf(fact.cart.unanswered), 0);
  const failedPayments = facts.filter((fact) => fact.cart.declined && !fact.succeeded).length;
  const refundedFacts = facts.filter((fact) => fact.refunded);
  const certainRefunds = refundedFacts.filter((fact) => !fact.cart.merchantRefunded);
  const expected: Record<string, number> = {
    totalOrders: facts.length,
    paidOrders,
    totalRevenue: revenueCents / 100,
    ...(maybeUnsold === 0 ? { booksSold } : {}),
    failedPayments,
    averageOrderValue: paidOrders === 0 ? 0 : Math.round(revenueCents / paidOrders) / 100,
    paymentSuccessRate: paidOrders + failedPayments === 0 ? 0 : Math.round((paidOrders * 10000) / (paidOrders + failedPayments)) / 100,
  };
  const dashboard = (await get(world, '/analytics/dashboard')).body;
  for (const [figure, value] of Object.entries(expected)) {
    expect('analytics', cents(dashboard[figure]) === cents(value), () => `dashboard ${figure} ${String(dashboard[figure])}, the ledger says ${value}`);
  }
  if (maybeUnsold > 0) {
    const sold = Number(dashboard.booksSold);
    expect('analytics', sold >= booksSold - maybeUnsold && sold <= booksSold, () => `dashboard booksSold ${sold}, the ledger says ${booksSold - maybeUnsold}..${booksSold}`);
  }
  const paymentsFigures = (await get(world, '/analytics/payments')).body;
  const refundedPayments = Number(paymentsFigures.refundedPayments);
  expect(
    'analytics',
    refundedPayments >= certainRefunds.length && refundedPayments <= refundedFacts.length,
    () => `payments refundedPayments ${refundedPayments}, the ledger says ${certainRefunds.length}..${refundedFacts.length}`,
  );
  if (certainRefunds.length === refundedFacts.length) {
    const refundedCents = refundedFacts.reduce((sum, fact) => sum + (fact.intent?.amount ?? 0), 0);
    expect(
      'analytics',
      cents(paymentsFigures.refundedAmount) === refundedCents,
      () => `payments refundedAmount ${String(paymentsFigures.refundedAmount)}, the ledger says ${refundedCents / 100}`,
    );
  }
  expect(
    'analytics',
    paymentsFigures.paidOrders === paidOrders && paymentsFigures.failedPayments === failedPayments,
    () => `payments paidOrders/failedPayments ${String(paymentsFigures.paidOrders)}/${String(paymentsFigures.failedPayments)}, the ledger says ${paidOrders}/${failedPayments}`,
  );

  for (const [name, url] of Object.entries(world.gatewayUrls)) {
    if (!world.stack.services[name as keyof typeof world.stack.services]) continue;
    const health = await get(world, '/actuator/health', '', url).catch((error: unknown) => ({ status: 0, body: { error: String(error) } }));
    expect('health', health.status === 200, () => `${name} service health: ${health.status} ${JSON.stringify(health.body)}`);
  }
  for (const bad of truth.badAnswers) expect('health', false, () => `${bad.op}: ${bad.method} ${bad.path} answered ${bad.status} ${bad.body}`);
  for (const surprise of truth.surprises) expect('health', false, () => surprise);
  // The alert an operator acts on when the provider refuses a refund for good is error-level by design:
  // the workload's own `refuse` operations cause it, no client does.
  const clientCaused = world.errorLines.filter((line) => !(truth.faults.refundsRefused > 0 && (JSON.parse(line) as { msg?: string }).msg === REFUND_PARKED_ALERT));
  expect('health', clientCaused.length === 0, () => `${clientCaused.length} error-level log lines, first: ${clientCaused.slice(0, 3).join('\n')}`);
  return { violations, checked };
}

/**
 * Whether every stock hold of the run has ended: no payment is still PAYMENT_PENDING under a hold.
 * Until then the expiry sweep may cancel an intent and fail its payment between the check's read of
 * the provider's ledger and its read of the payment, and the two would disagree for a moment.
 */
async function holdsEnded(world: World): Promise<boolean> {
  for (const cart of world.truth.payments()) {
    const payment = await get(world, `/api/payments/${cart.paymentId}`, world.truth.users.get(cart.user)?.bearer);
    if (payment.status === 200 && payment.body.status === 'PAYMENT_PENDING' && payment.body.holdExpiresAt !== null) return false;
  }
  return true;
}

/**
 * Releases held webhooks, then checks until every invariant holds twice, a second apart (events
 * still in flight could break them again), or `timeoutMs` passes: then the last violations stand.
 */
export async function settleAndCheck(world: World, timeoutMs = 20_000): Promise<CheckResult> {
  await world.gate.releaseAll();
  // The provider takes refunds again, the bank answers any refund still pending, and an admin works through what failed until the list is empty.
  world.stack.stripe!.injectFaults({ refuseRefunds: 0, pendingRefunds: 0 });
  const stripe = world.stack.stripe!;
  for (const pending of stripe.refunds().filter((refund) => refund.status === 'pending')) await stripe.settleRefund(pending.id, 'succeeded');
  try {
    await waitFor(() => holdsEnded(world), { timeoutMs, intervalMs: 250, what: 'every stock hold of the run to end' });
  } catch {
    return { violations: [{ invariant: 'holds', detail: `a payment was still PAYMENT_PENDING under a stock hold ${timeoutMs} ms after the run` }], checked: {} };
  }
  let last: CheckResult = { violations: [], checked: {} };
  const holds = async () => {
    const retried = await retryFailedRefunds(world);
    last = await checkOnce(world).catch((error: unknown) => ({
      violations: [{ invariant: 'checker', detail: `the check itself failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}` }],
      checked: {},
    }));
    if (retried > 0) last.violations.push({ invariant: 'refunds', detail: `${retried} refunds were FAILED when checked, and were retried` });
    return last.violations.length === 0;
  };
  try {
    await waitFor(holds, { timeoutMs, intervalMs: 250, what: 'the invariants' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await holds();
  } catch {
    // The deadline passed: `last` holds what still fails.
  }
  return last;
}
