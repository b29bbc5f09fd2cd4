/**
 * Plays a workload against a world: waves in order, the operations of a wave all at once
 * (Promise.all), each recording what it learnt in the ground truth. An operation whose
 * prerequisite did not happen (no token, no payment, no order yet) does nothing.
 */
import { randomUUID } from 'node:crypto';
import { newUser } from '../stack';
import { describe, type Operation } from './operations';
import type { CartTruth } from './truth';
import type { World } from './world';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const PROVIDER_FAILED = 'The payment provider failed';
const EXCEEDS_LEFT = 'Refund exceeds the amount left';

/** One HTTP call; a 5xx the contract does not allow here goes into the ground truth's bad answers. */
async function call(world: World, op: Operation, method: string, path: string, options: { bearer?: string; body?: unknown; base?: string } = {}): Promise<Answer> {
  const response = await fetch(`${options.base ?? world.gateway.url}${path}`, {
    method,
    headers: { ...(options.bearer ? { authorization: options.bearer } : {}), ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { text };
  }
  const status = response.status;
  world.truth.count(op.kind, status);
  // A provider that keeps failing is a 502 (CONTRACT §1.2); a service restarting is the gateway's 503.
  const allowed = (status === 502 && body.message === PROVIDER_FAILED) || (status === 503 && world.restarting);
  if (status === 502 && body.message === PROVIDER_FAILED) world.truth.faults.providerCallsFailed += 1;
  if (status >= 500 && !allowed) world.truth.badAnswers.push({ op: describe(op), method, path, status, body: text.slice(0, 300) });
  return { status, body };
}

/**
 * What an admin does with the failed-refunds list: retries each refund on it. A retry the provider
 * refuses again leaves it FAILED (200); one another admin retried first is a 409, and so is one that
 * no longer fits what is left (CONTRACT §11: a FAILED refund holds nothing, and refunds made since
 * took the money): that one stays FAILED, remembered in the ground truth until a retry fits again.
 * Resolves with how many refunds were retried that may still succeed.
 */
export async function retryFailedRefunds(world: World, op: Operation = { kind: 'retryRefunds', wave: -1 }): Promise<number> {
  const list = await call(world, op, 'GET', '/api/payments/refunds?status=FAILED', { bearer: world.adminBearer });
  if (list.status !== 200 || !Array.isArray(list.body)) return 0;
  const failed = list.body as { refundId: string; paymentId: string }[];
  const answers = await Promise.all(failed.map((refund) => call(world, op, 'POST', `/api/payments/refunds/${refund.refundId}/retry`, { bearer: world.adminBearer })));
  const { unfitRefunds } = world.truth;
  failed.forEach((refund, index) => {
    const { status, body } = answers[index];
    if (status === 409 && String(body.message).startsWith(EXCEEDS_LEFT)) unfitRefunds.set(refund.refundId, refund.paymentId);
    else unfitRefunds.delete(refund.refundId);
  });
  world.truth.faults.refundsRetried += failed.length;
  return failed.filter((refund) => !unfitRefunds.has(refund.refundId)).length;
}

async function orderIdOf(world: World, op: Operation, cart: CartTruth): Promise<string | undefined> {
  if (cart.orderId || !cart.paymentId) return cart.orderId;
  const res = await call(world, op, 'GET', `/api/orders/payment/${cart.paymentId}`, { bearer: world.adminBearer });
  if (res.status === 200) cart.orderId = res.body.orderId as string;
  return cart.orderId;
}

async function perform(world: World, op: Operation): Promise<void> {
  const { truth } = world;
  const sim = (path: string, body: unknown = {}) => call(world, op, 'POST', `/simulator${path}`, { base: world.simulatorUrl, body });
  if (op.kind === 'register' || op.kind === 'login') {
    let user = truth.users.get(op.user);
    if (op.kind === 'register') {
      user ??= { email: `inv${op.user}-${randomUUID().slice(0, 8)}@example.com`, password: 'Secret123', registered: 0 };
      truth.users.set(op.user, user);
      const res = await call(world, op, 'POST', '/auth/register', { body: newUser({ email: user.email, password: user.password }) });
      if (res.status !== 200) return;
      // Registrations of one email may run at once: whichever answers 200 first is the one, any other 200 is a second account.
      user.registered += 1;
      if (user.registered > 1) truth.surprises.push(`${describe(op)}: a second registration of the same email answered 200`);
    }
    if (!user) return;
    const res = await call(world, op, 'POST', '/auth/login', {
      body: { email: user.email, password: op.kind === 'login' && op.wrongPassword ? 'Wrong12345' : user.password, deviceId: 'invariants' },
    });
    if (op.kind === 'login' && op.wrongPassword && res.status === 200) truth.surprises.push(`${describe(op)}: a wrong password logged in`);
    if (res.status === 200) user.bearer = `Bearer ${res.body.accessToken as string}`;
    return;
  }
  if (op.kind === 'fault') {
    await sim('/faults', { failNext: op.failNext, status: 500 });
    return;
  }
  if (op.kind === 'restart') return world.restart(op.service);
  if (op.kind === 'refuse') {
    await sim('/faults', { refuseRefunds: op.refunds });
    truth.faults.refundsRefused += op.refunds;
    return;
  }
  if (op.kind === 'retryRefunds') {
    await retryFailedRefunds(world, op);
    return;
  }
  if (op.kind === 'setStock') {
    const book = truth.books[op.book];
    const read = await call(world, op, 'GET', `/api/books/${book.id}`);
    if (read.status !== 200 || typeof read.body.stock !== 'number') return;
    const { heldStock: _held, availableStock: _available, id: _id, createdAt: _created, updatedAt: _updated, coverImageUrl: _cover, ...fields } = read.body;
    const res = await call(world, op, 'PUT', `/api/books/update/${book.id}`, { bearer: world.adminBearer, body: { ...fields, stock: Math.max(0, read.body.stock + op.delta) } });
    if (res.status === 200) {
      book.adminChanged = true;
      truth.stock.stockSet += 1;
    } else if (res.status === 409 && String(res.body.message).startsWith('Stock cannot be set below')) truth.stock.stockSetRefused += 1;
    else if (res.status !== 409) truth.surprises.push(`${describe(op)}: answered ${res.status} ${JSON.stringify(res.body)}`);
    return;
  }

  if (op.kind === 'checkout') {
    const bearer = truth.users.get(op.user)?.bearer;
    if (!bearer) {
      truth.count(op.kind, 'skipped');
      return;
    }
    let cart = truth.carts.get(op.cart);
    if (!cart) {
      cart = {
        user: op.user,
        items: op.items.map((i) => ({ bookId: truth.books[i.book].id, quantity: i.quantity })),
        checkoutId: randomUUID(),
        paymentIds: new Set(),
        intentIds: [],
        declinedIntents: new Set(),
        cancelled: false,
        refunds: [],
        unanswered: [],
        merchantRefunded: false,
        declined: false,
      };
      truth.carts.set(op.cart, cart);
    }
    const res = await call(world, op, 'POST', '/api/payments/checkout', { bearer, body: { checkoutId: cart.checkoutId, items: cart.items } });
    cart.lastCheckout = res.status;
    if (op.rush) truth.stock.rushCheckouts += 1;
    if (res.status === 409 && String(res.body.message).startsWith('Not enough stock')) truth.stock.refusedForStock += 1;
    if (res.status !== 200) return;
    cart.paymentIds.add(res.body.paymentId as string);
    cart.paymentId ??= res.body.paymentId as string;
    // Held anew after its hold ended: a new intent, the old one cancelled.
    const intent = res.body.paymentIntentId as string;
    if (!cart.intentIds.includes(intent)) cart.intentIds.push(intent);
    cart.intentId = intent;
    if (typeof res.body.holdExpiresAt === 'string') cart.holdExpiresAt = Date.parse(`${res.body.holdExpiresAt}Z`);
    return;
  }

  const cart = truth.carts.get(op.cart);
  if (!cart?.intentId) {
    truth.count(op.kind, 'skipped');
    return;
  }
  const intent = cart.intentId;
  switch (op.kind) {
    case 'pay':
      await sim(`/payment_intents/${intent}/confirm`);
      return;
    case 'payAtExpiry': {
      // Bounded: a hold is three seconds here.
      const wait = Math.min(5_000, Math.max(0, (cart.holdExpiresAt ?? Date.now()) + op.offsetMs - Date.now()));
      await new Promise((resolve) => setTimeout(resolve, wait));
      truth.stock.paidAroundExpiry += 1;
      await sim(`/payment_intents/${intent}/confirm`);
      return;
    }
    case 'decline':
      if ((await sim(`/payment_intents/${intent}/fail`, { reason: 'card_declined' })).status === 200) {
        cart.declined = true;
        cart.declinedIntents.add(intent);
      }
      return;
    case 'merchantRefund':
      if ((await sim(`/payment_intents/${intent}/refund`)).status === 200) cart.merchantRefunded = true;
      return;
    case 'hold':
      world.gate.hold(intent);
      return;
    case 'release':
      truth.faults.heldWebhooks += (await world.gate.release(intent)).length;
      return;
    case 'resend': {
      const event = world.stack
        .stripe!.events()
        .filter((e) => e.type === op.event && [e.data.object.id, (e.data.object as { payment_intent?: string }).payment_intent].includes(intent))
        .pop();
      if (!event) {
        truth.count(op.kind, 'skipped');
        return;
      }
      truth.faults.resends += 1;
      await sim(`/events/${event.id}/resend`);
      return;
    }
    case 'cancel': {
      const orderId = await orderIdOf(world, op, cart);
      if (!orderId) {
        truth.count(op.kind, 'skipped');
        return;
      }
      const bearer = op.asAdmin ? world.adminBearer : truth.users.get(cart.user)?.bearer;
      if ((await call(world, op, 'POST', `/api/orders/${orderId}/cancel`, { bearer })).status === 204) cart.cancelled = true;
      return;
    }
    case 'partialRefund': {
      const asked = op.refund;
      const items = 'cents' in asked ? [] : [{ bookId: cart.items[asked.line].bookId, quantity: asked.quantity }];
      const restock = 'restock' in asked && asked.restock;
      const body = 'cents' in asked ? { amount: asked.cents / 100, reason: 'REQUESTED_BY_CUSTOMER' } : { items, reason: 'DAMAGED', restock };
      const res = await call(world, op, 'POST', `/api/payments/${cart.paymentId}/refunds`, { bearer: world.adminBearer, body });
      // 409 (the payment is not SUCCESS, or not that much or that many copies are left), or any other 4xx: no refund.
      if (res.status === 201) cart.refunds.push({ refundId: res.body.refundId as string, cents: Math.round(Number(res.body.amount) * 100), items, restock });
      else if (res.status >= 500) cart.unanswered.push({ cents: 'cents' in asked ? asked.cents : 0, items, restock });
      return;
    }
    case 'bankFailsRefund': {
      // The next refund at the provider is pending (this one, or one racing it: the settle phase has the bank answer any left).
      await sim('/faults', { pendingRefunds: 1 });
      const res = await call(world, op, 'POST', `/api/payments/${cart.paymentId}/refunds`, { bearer: world.adminBearer, body: { amount: op.cents / 100, reason: 'OTHER' } });
      if (res.status >= 500) cart.unanswered.push({ cents: op.cents, items: [], restock: false });
      if (res.status !== 201) return;
      cart.refunds.push({ refundId: res.body.refundId as string, cents: op.cents, items: [], restock: false });
      const atProvider = world.stack.stripe!.refunds().find((refund) => refund.metadata.refundId === res.body.refundId && refund.status === 'pending');
      if (atProvider) await sim(`/refunds/${atProvider.id}/fail`);
      truth.count(op.kind, atProvider ? 'failed by the bank' : 'not pending');
      return;
    }
    case 'setStatus': {
      const orderId = await orderIdOf(world, op, cart);
      if (!orderId) {
        truth.count(op.kind, 'skipped');
        return;
      }
      const res = await call(world, op, 'PUT', `/api/orders/${orderId}/status?status=${op.status}`, { bearer: world.adminBearer });
      if (res.status === 200 && op.status === 'CANCELLED') cart.cancelled = true;
      return;
    }
  }
}

/** Runs the operations wave by wave until done or `deadline` (epoch ms); resolves with how many ran. */
export async function runOperations(world: World, ops: readonly Operation[], deadline = Infinity): Promise<number> {
  let done = 0;
  for (let start = 0; start < ops.length && Date.now() < deadline;) {
    let end = start;
    while (end < ops.length && ops[end].wave === ops[start].wave) end += 1;
    await Promise.all(
      ops.slice(start, end).map((op) =>
        perform(world, op).catch((error: unknown) => {
          world.truth.surprises.push(`${describe(op)}: threw ${error instanceof Error ? error.message : String(error)}`);
        }),
      ),
    );
    done = end;
    start = end;
  }
  return done;
}
