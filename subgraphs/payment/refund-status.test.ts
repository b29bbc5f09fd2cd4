/**
 * A refund's state comes from what the provider says of that refund (CONTRACT §11): never from its
 * charge being refunded in full, which counts pending refunds; a failure reported after a success
 * reverses it; a refund whose answer was lost is asked again under its own key before a cancel
 * counts what is left. Checked against the simulator's ledger.
 */
import request from 'supertest';
import type { ConsumedMessage, Subscription } from '../../platform/events/bus';
import { TOPICS } from '../../platform/events/topics';
import { checkout, createBook, observe, paymentWhen, type CatalogueBook } from '../../test/commerce';
import { graphql } from '../../test/graphql';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';

let stack: Stack;
let admin: Awaited<ReturnType<typeof adminSession>>;
let buyer: Awaited<ReturnType<typeof registeredUser>>;
let book: CatalogueBook;
let observer: Subscription;
let webhooksOn = true;
jest.setTimeout(90_000);

const events: ConsumedMessage[] = [];

beforeAll(async () => {
  stack = await startStack({
    services: ['book', 'order', 'payment'],
    stripeWebhookUrl: () => (webhooksOn ? `${stack.urls.payment}/api/payments/webhook` : 'http://127.0.0.1:9/api/payments/webhook'),
  });
  admin = await adminSession(stack);
  buyer = await registeredUser(stack);
  book = await createBook(stack, admin.bearer, 'Middlemarch', 20, 50);
  observer = await observe(stack, [TOPICS.paymentRefundSucceeded, TOPICS.paymentRefunded, TOPICS.paymentRefundFailed], events);
}, 60_000);
afterAll(async () => {
  await observer?.stop();
  await stack?.stop();
});

const sim = () => stack.stripe!;
const eventsOf = (topic: string, paymentId: string) => events.filter((m) => m.topic === topic && m.key === paymentId).map((m) => JSON.parse(m.value) as Record<string, unknown>);
const refund = (paymentId: string, amount: number) =>
  request(stack.urls.payment).post(`/api/payments/${paymentId}/refunds`).set('Authorization', admin.bearer).send({ amount, reason: 'OTHER' });
const providerRefundOf = (refundId: string) =>
  sim()
    .refunds()
    .filter((r) => r.metadata.refundId === refundId);
/** What the provider refunded of an intent: its refunds that succeeded. */
const refundedAtProvider = (intentId: string) =>
  sim()
    .refunds()
    .filter((r) => r.payment_intent === intentId && r.status === 'succeeded')
    .reduce((sum, r) => sum + r.amount, 0);
const eventsAbout = (intentId: string, type: string) =>
  sim()
    .events()
    .filter((e) => e.type === type && (e.data.object as { payment_intent?: string; id?: string }).payment_intent === intentId);

/** One copy at 20.00, paid, with its order. */
async function paid(): Promise<{ paymentId: string; intentId: string; orderId: string }> {
  const { body } = await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 1 }]);
  await sim().confirm(body.paymentIntentId);
  await paymentWhen(stack, buyer.bearer, body.paymentId, (p) => p.status === 'SUCCESS', 'SUCCESS');
  const order = await waitFor(
    async () => {
      const res = await request(stack.urls.order).get(`/api/orders/payment/${body.paymentId}`).set('Authorization', buyer.bearer);
      return res.status === 200 ? (res.body as { orderId: string }) : undefined;
    },
    { what: 'the order' },
  );
  return { paymentId: body.paymentId, intentId: body.paymentIntentId, orderId: order.orderId };
}

/** Every webhook about the intent delivered again, newest first: duplicates, out of order. */
async function resendAllNewestFirst(intentId: string): Promise<void> {
  const all = [...eventsAbout(intentId, 'charge.refunded'), ...eventsAbout(intentId, 'refund.created'), ...eventsAbout(intentId, 'refund.updated')];
  for (const event of all.sort((a, b) => b.created - a.created || b.id.localeCompare(a.id))) await sim().resend(event.id);
}

/** The refund the bank failed: FAILED with its reason, in the admin's failed list (REST and GraphQL), and no success told of it. */
async function expectFailedForAnAdmin(refundId: string, failureReason: string): Promise<void> {
  const list = await request(stack.urls.payment).get('/api/payments/refunds?status=FAILED').set('Authorization', admin.bearer);
  expect(list.status).toBe(200);
  expect((list.body as { refundId: string }[]).find((r) => r.refundId === refundId)).toMatchObject({ status: 'FAILED', failureReason });
  const gql = await graphql(stack.urls.payment, '{ failedRefunds { refundId status failureReason } }', { bearer: admin.bearer });
  expect((gql.body.data.failedRefunds as { refundId: string }[]).find((r) => r.refundId === refundId)).toEqual({ refundId, status: 'FAILED', failureReason });
}

/** The bank fails the pending refund, every webhook delivered again out of order: SUCCESS, 15 of 20 refunded as at the provider, the refund FAILED for an admin. */
async function bankFailsPending(paymentId: string, intentId: string, refundId: string): Promise<void> {
  await sim().settleRefund(providerRefundOf(refundId)[0].id, 'failed');
  await resendAllNewestFirst(intentId);
  const after = await paymentWhen(stack, buyer.bearer, paymentId, (p) => (p.refunds as { status: string }[]).every((r) => r.status !== 'PENDING'), 'no refund PENDING');
  expect(after).toMatchObject({ status: 'SUCCESS', refundedAmount: 15 });
  expect(refundedAtProvider(intentId)).toBe(1500);
  await expectFailedForAnAdmin(refundId, 'The payment provider reported the refund failed');
}

const chargeRefundedInFull = (intentId: string) =>
  waitFor(() => eventsAbout(intentId, 'charge.refunded').find((e) => (e.data.object as { refunded?: boolean }).refunded), { what: 'the charge refunded in full' });

async function retried(refundId: string) {
  const res = await request(stack.urls.payment).post(`/api/payments/refunds/${refundId}/retry`).set('Authorization', admin.bearer);
  expect(res.status).toBe(200);
  return res.body as { status: string };
}

describe('a refund pending at the provider when the charge is refunded in full', () => {
  it('(a) an admin refund of 5 pending, the customer cancels, the bank fails the 5: not REFUNDED, 15 refunded, the 5 FAILED and retryable', async () => {
    const { paymentId, intentId, orderId } = await paid();
    sim().injectFaults({ pendingRefunds: 1 });
    const five = await refund(paymentId, 5);
    expect(five.status).toBe(201);
    expect(five.body.status).toBe('PENDING');
    const cancel = await request(stack.urls.order).post(`/api/orders/${orderId}/cancel`).set('Authorization', buyer.bearer);
    expect(cancel.status).toBe(204);
    await chargeRefundedInFull(intentId);
    await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.refundedAmount === 15, 'the cancel refund SUCCEEDED');

    await bankFailsPending(paymentId, intentId, five.body.refundId);
    expect(eventsOf(TOPICS.paymentRefundSucceeded, paymentId).map((e) => e.refundId)).not.toContain(five.body.refundId);
    expect(eventsOf(TOPICS.paymentRefunded, paymentId)).toEqual([]);

    expect((await retried(five.body.refundId)).status).toBe('SUCCEEDED');
    await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'REFUNDED' && p.refundedAmount === 20, 'REFUNDED after the retry');
    expect(refundedAtProvider(intentId)).toBe(2000);
  });

  it('(b) two admin refunds, 5 pending then 15: the bank fails the 5, the payment stays SUCCESS with 15 refunded', async () => {
    const { paymentId, intentId } = await paid();
    sim().injectFaults({ pendingRefunds: 1 });
    const five = await refund(paymentId, 5);
    const fifteen = await refund(paymentId, 15);
    expect([five.body.status, fifteen.body.status]).toEqual(['PENDING', 'SUCCEEDED']);
    await chargeRefundedInFull(intentId);
    await resendAllNewestFirst(intentId);
    await bankFailsPending(paymentId, intentId, five.body.refundId);
    expect(eventsOf(TOPICS.paymentRefundSucceeded, paymentId).map((e) => e.refundId)).toEqual([fifteen.body.refundId]);
  });
});

describe('a refund that failed after it had succeeded', () => {
  it('is reversed: FAILED for an admin, the payment out of REFUNDED, payment-refund-failed with the amount reversed; a retry refunds it again', async () => {
    const { paymentId, intentId } = await paid();
    const five = await refund(paymentId, 5);
    const rest = await refund(paymentId, 15);
    expect([five.body.status, rest.body.status]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'REFUNDED', 'REFUNDED');

    const reversal = await sim().settleRefund(providerRefundOf(five.body.refundId)[0].id, 'failed');
    await sim().resend(reversal.event.event.id);
    await resendAllNewestFirst(intentId);

    const after = await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'SUCCESS', 'SUCCESS again');
    expect(after.refundedAmount).toBe(15);
    expect(refundedAtProvider(intentId)).toBe(1500);
    const reason = 'The payment provider reported the refund failed after it had succeeded; retry the refund';
    await expectFailedForAnAdmin(five.body.refundId, reason);
    const reversed = await waitFor(() => eventsOf(TOPICS.paymentRefundFailed, paymentId).find((e) => e.refundId === five.body.refundId), { what: 'the reversal' });
    expect(reversed).toMatchObject({ reason: 'refund_reversed', reversedAmount: 5, refundedAmount: 15, paymentAmount: 20, full: true, attempt: 0 });

    expect((await retried(five.body.refundId)).status).toBe('SUCCEEDED');
    await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'REFUNDED' && p.refundedAmount === 20, 'REFUNDED after the retry');
    expect(providerRefundOf(five.body.refundId).map((r) => [r.status, r.metadata.attempt])).toEqual([
      ['failed', '0'],
      ['succeeded', '1'],
    ]);
    const again = await waitFor(() => eventsOf(TOPICS.paymentRefundSucceeded, paymentId).filter((e) => e.refundId === five.body.refundId)[1], { what: 'the retry succeeded' });
    expect(again).toMatchObject({ attempt: 1, full: true });
  });
});

describe('a refund whose answer was lost', () => {
  it('is asked again under its own key before a cancel counts what is left: nothing parked, the provider refunds the amount once', async () => {
    const { paymentId, intentId, orderId } = await paid();
    webhooksOn = false;
    try {
      // The SDK retries once on a dropped connection; both answers are lost.
      sim().injectFaults({ dropRefundAnswers: 2 });
      const lost = await refund(paymentId, 5);
      expect(lost.status).toBe(502);
      expect(
        sim()
          .refunds()
          .filter((r) => r.payment_intent === intentId),
      ).toHaveLength(1);
      const parked = await paymentWhen(stack, buyer.bearer, paymentId, (p) => (p.refunds as unknown[]).length === 1, 'the refund recorded');
      expect((parked.refunds as { status: string }[])[0].status).toBe('FAILED');
      // While it may be at the provider, no other refund takes its amount.
      expect((await refund(paymentId, 16)).status).toBe(409);

      const cancel = await request(stack.urls.order).post(`/api/orders/${orderId}/cancel`).set('Authorization', buyer.bearer);
      expect(cancel.status).toBe(204);
      const done = await paymentWhen(
        stack,
        buyer.bearer,
        paymentId,
        (p) => (p.refunds as { status: string }[]).length === 2 && (p.refunds as { status: string }[]).every((r) => r.status !== 'PENDING'),
        'the cancel handled',
      );
      expect((done.refunds as { amount: number; status: string }[]).map((r) => [r.amount, r.status])).toEqual([
        [5, 'SUCCEEDED'],
        [15, 'SUCCEEDED'],
      ]);
    } finally {
      webhooksOn = true;
    }
    await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'REFUNDED' && p.refundedAmount === 20, 'REFUNDED');
    expect(refundedAtProvider(intentId)).toBe(2000);
    expect(
      sim()
        .refunds()
        .filter((r) => r.payment_intent === intentId),
    ).toHaveLength(2);
  });
});
