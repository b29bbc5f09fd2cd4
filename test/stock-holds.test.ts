/**
 * Stock holds that run out (CONTRACT §4, §5, §6, §8), end to end through the gateway: an expired
 * checkout's PaymentIntent is cancelled at the provider and its copies freed, with no failed payment
 * counted; the same checkout after its hold ended holds anew with a new intent; a payment that
 * succeeds when its copies are gone is refunded in full and its order cancelled with the reason, an
 * e-mail and the figures an admin reads. Holds last 0.02 minutes (1.2 s) here, so expiry happens
 * within a test; subgraphs/book/inventory.test.ts has the rules that need holds to stay put.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { LocalMailbox } from '../platform/mail/local-mailbox';
import type { CheckoutHolds } from '../subgraphs/payment/holds';
import { checkout, createBook, paymentWhen, type CatalogueBook } from './commerce';
import { graphqlHalf } from '../gateway/graphql';
import { createLogger } from '../platform/logger';
import { startGateway, type RunningGateway } from './gateway';
import { adminSession, expectEnvelope, registeredUser, startStack, waitFor, type Stack } from './harness';
import { mailTo, startMailbox } from './mailbox';

const HOLD_MS = 1_200;

let stack: Stack;
let gateway: RunningGateway;
let mailbox: LocalMailbox;
let admin: Awaited<ReturnType<typeof adminSession>>;
/** While true, the simulator's webhooks are held back (it records them; a test resends what it wants delivered). */
let webhooksHeld = false;

beforeAll(async () => {
  const smtp = await startMailbox();
  mailbox = smtp.mailbox;
  stack = await startStack({
    services: ['book', 'order', 'payment', 'analytics'],
    env: { ...smtp.env, STOCK_HOLD_MINUTES: String(HOLD_MS / 60_000) },
    stripeWebhookUrl: () => (webhooksHeld ? undefined : `${stack.config.urls.payment}/api/payments/webhook`),
  });
  gateway = await startGateway(stack.config, { mountGraphql: graphqlHalf({ config: stack.config, logger: createLogger(stack.config.logLevel) }) });
  admin = await adminSession(stack);
}, 60_000);
afterAll(async () => {
  await gateway?.stop();
  await stack?.stop();
  await mailbox?.stop();
});

const api = () => request(gateway.url);
const sim = () => stack.stripe!;
const viaGateway = () => ({ ...stack, urls: { ...stack.urls, payment: gateway.url } });
const buyFrom = (bearer: string, items: { bookId: string; quantity: number }[], checkoutId?: string) => checkout(viaGateway(), bearer, items, checkoutId);
const bookOf = async (id: string) => (await api().get(`/api/books/${id}`)).body as { stock: number; heldStock: number; availableStock: number };
const dashboard = async () => (await api().get('/analytics/dashboard').set('Authorization', admin.bearer)).body as Record<string, number>;
const holds = () => (stack.services.payment as unknown as { holds: CheckoutHolds }).holds;

async function orderOf(bearer: string, paymentId: string) {
  return waitFor(
    async () => {
      const res = await api().get(`/api/orders/payment/${paymentId}`).set('Authorization', bearer);
      return res.status === 200 ? (res.body as Record<string, unknown>) : undefined;
    },
    { what: `the order of payment ${paymentId}` },
  );
}

async function rareBook(copies: number): Promise<CatalogueBook> {
  return createBook(stack, admin.bearer, `Signed first edition ${randomUUID().slice(0, 6)}`, 80, copies);
}

describe('a hold ends once', () => {
  it('expires an unpaid checkout: its intent is cancelled at the provider, its payment FAILED with checkout_expired, its copies free, and the dashboard counts no failure', async () => {
    const buyer = await registeredUser(stack);
    const book = await rareBook(2);
    const before = await dashboard();
    const res = await buyFrom(buyer.bearer, [{ bookId: book.id, quantity: 2 }]);
    expect(res.status).toBe(200);
    expect(res.body.holdExpiresAt).toEqual(expect.any(String));

    const expired = await paymentWhen(stack, buyer.bearer, res.body.paymentId, (p) => p.status === 'FAILED', 'the expired checkout');
    expect(expired).toMatchObject({ failureReason: 'checkout_expired', holdExpiresAt: null });
    expect(
      sim()
        .intents()
        .find((intent) => intent.id === res.body.paymentIntentId)?.status,
    ).toBe('canceled');
    await waitFor(async () => (await bookOf(book.id)).availableStock === 2, { what: 'the copies back' });
    // It can no longer be paid.
    await expect(sim().confirm(res.body.paymentIntentId)).rejects.toThrow();

    const created = await waitFor(async () => ((await dashboard()).totalOrders > before.totalOrders ? await dashboard() : undefined), { what: 'the checkout counted' });
    expect(created.failedPayments).toBe(before.failedPayments);
    expect(created.paymentSuccessRate).toBe(before.paymentSuccessRate);
  });

  it('counts a decline that the expiry overtook as the reason the payment failed, and the dashboard as a failed payment', async () => {
    const buyer = await registeredUser(stack);
    const book = await rareBook(1);
    const before = await dashboard();
    const res = await buyFrom(buyer.bearer, [{ bookId: book.id, quantity: 1 }]);
    expect(res.status).toBe(200);
    // The bank declines the card; its webhook is late, and the hold runs out before it arrives.
    webhooksHeld = true;
    let declined: Awaited<ReturnType<ReturnType<typeof sim>['fail']>>;
    try {
      declined = await sim().fail(res.body.paymentIntentId, 'card_declined');
      const expired = await paymentWhen(stack, buyer.bearer, res.body.paymentId, (p) => p.status === 'FAILED', 'the expired checkout');
      expect(expired.failureReason).toBe('checkout_expired');
    } finally {
      webhooksHeld = false;
    }
    expect((await sim().resend(declined.event.id)).status).toBe('delivered');

    const failed = await paymentWhen(stack, buyer.bearer, res.body.paymentId, (p) => p.failureReason !== 'checkout_expired', 'the decline applied');
    expect(failed).toMatchObject({ status: 'FAILED', failureReason: 'card_declined' });
    const counted = await waitFor(async () => ((await dashboard()).failedPayments > before.failedPayments ? await dashboard() : undefined), { what: 'the decline counted' });
    expect(counted.failedPayments).toBe(before.failedPayments + 1);
    // Delivered again, it changes nothing more.
    expect((await sim().resend(declined.event.id)).status).toBe('delivered');
    expect((await dashboard()).failedPayments).toBe(before.failedPayments + 1);
    await waitFor(async () => (await bookOf(book.id)).availableStock === 1, { what: 'the copy back' });
  });

  it('holds again for the same checkout after its hold expired, with a new PaymentIntent, or answers 409 when the copies went meanwhile', async () => {
    const [buyer, other] = [await registeredUser(stack), await registeredUser(stack)];
    const book = await rareBook(2);
    const checkoutId = randomUUID();
    const first = await buyFrom(buyer.bearer, [{ bookId: book.id, quantity: 1 }], checkoutId);
    await paymentWhen(stack, buyer.bearer, first.body.paymentId, (p) => p.status === 'FAILED', 'the expired checkout');

    const again = await buyFrom(buyer.bearer, [{ bookId: book.id, quantity: 1 }], checkoutId);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ paymentId: first.body.paymentId, status: 'PAYMENT_PENDING', failureReason: null });
    expect(again.body.paymentIntentId).not.toBe(first.body.paymentIntentId);
    expect(Date.parse(`${again.body.holdExpiresAt}Z`)).toBeGreaterThan(Date.parse(`${first.body.holdExpiresAt}Z`));
    expect(
      sim()
        .intents()
        .find((intent) => intent.id === first.body.paymentIntentId)?.status,
    ).toBe('canceled');
    await sim().confirm(again.body.paymentIntentId);
    expect((await orderOf(buyer.bearer, again.body.paymentId)).status).toBe('CONFIRMED');

    // The next expiry finds the last copy gone to someone else.
    const late = await buyFrom(buyer.bearer, [{ bookId: book.id, quantity: 1 }]);
    await paymentWhen(stack, buyer.bearer, late.body.paymentId, (p) => p.status === 'FAILED', 'the second expired checkout');
    // Its payment-failed reaches the book service through the outbox and the bus, which then lets the copy go.
    await waitFor(async () => (await bookOf(book.id)).availableStock === 1, { what: 'the expired checkout’s copy back' });
    const taken = await buyFrom(other.bearer, [{ bookId: book.id, quantity: 1 }]);
    await sim().confirm(taken.body.paymentIntentId);
    await orderOf(other.bearer, taken.body.paymentId);
    expectEnvelope(await buyFrom(buyer.bearer, [{ bookId: book.id, quantity: 1 }], late.body.checkoutId), 409, `Not enough stock for ${book.title}: 0 left`);
  });
});

describe('a payment that succeeds when its copies are gone', () => {
  it('is refunded in full, its order CANCELLED with the reason, the customer told, and an admin sees it', async () => {
    const [late, early] = [await registeredUser(stack), await registeredUser(stack)];
    const book = await rareBook(1);
    const before = await dashboard();
    // The provider does not take the expired checkout's cancel (the sweep is held off), so its intent stays payable.
    await holds().stop();
    let held: request.Response;
    try {
      held = await buyFrom(late.bearer, [{ bookId: book.id, quantity: 1 }]);
      expect(held.status).toBe(200);
      // Once a hold is a whole hold's length past its expiry, nobody counts it any more.
      await waitFor(async () => (await bookOf(book.id)).availableStock === 1, { what: 'the forgotten hold lapsed', timeoutMs: 10 * HOLD_MS });
      const taken = await buyFrom(early.bearer, [{ bookId: book.id, quantity: 1 }]);
      await sim().confirm(taken.body.paymentIntentId);
      expect((await orderOf(early.bearer, taken.body.paymentId)).status).toBe('CONFIRMED');
      await sim().confirm(held.body.paymentIntentId);
    } finally {
      holds().start();
    }

    const order = await orderOf(late.bearer, held.body.paymentId);
    expect(order).toMatchObject({ status: 'CANCELLED', cancellationReason: `Out of stock: ${book.title} (0 left)` });
    const refunded = await paymentWhen(stack, late.bearer, held.body.paymentId, (p) => p.status === 'REFUNDED', 'the full refund');
    expect(refunded.refundedAmount).toBe(80);
    const ledger = sim()
      .refunds()
      .filter((refund) => refund.payment_intent === held.body.paymentIntentId && refund.status === 'succeeded');
    expect(ledger.reduce((sum, refund) => sum + refund.amount, 0)).toBe(8000);
    expect((await bookOf(book.id)).stock).toBe(0);

    const told = await mailTo(mailbox, late.email, /could not fill/);
    expect(told.text).toContain(`we no longer have enough copies of ${book.title} (0 left)`);
    await mailTo(mailbox, late.email, /is cancelled and refunded/);

    const seen = await api()
      .get(`/api/orders/${String(order.orderId)}`)
      .set('Authorization', admin.bearer);
    expect(seen.body).toMatchObject({ status: 'CANCELLED', refundStatus: 'REFUNDED', cancellationReason: `Out of stock: ${book.title} (0 left)` });
    const graph = await api()
      .post('/graphql')
      .set('Authorization', admin.bearer)
      .send({ query: `{ order(orderId: "${String(order.orderId)}") { status cancellationReason payment { status refundedAmount } } }` });
    expect(graph.body).toEqual({
      data: { order: { status: 'CANCELLED', cancellationReason: `Out of stock: ${book.title} (0 left)`, payment: { status: 'REFUNDED', refundedAmount: '80.00' } } },
    });
    const figures = await waitFor(async () => ((await dashboard()).totalRefunds > before.totalRefunds ? await dashboard() : undefined), { what: 'the refund in analytics' });
    expect(figures.refundedAmount - before.refundedAmount).toBeCloseTo(80, 2);
  });
});
