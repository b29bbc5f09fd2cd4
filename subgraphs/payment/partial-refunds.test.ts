import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ConsumedMessage, Subscription } from '../../platform/events/bus';
import { TOPICS } from '../../platform/events/topics';
import { checkout, createBook, observe, paymentWhen, type CatalogueBook } from '../../test/commerce';
import { graphql } from '../../test/graphql';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';

let stack: Stack;
let admin: Awaited<ReturnType<typeof adminSession>>;
let buyer: Awaited<ReturnType<typeof registeredUser>>;
let emma: CatalogueBook;
let dune: CatalogueBook;
let observer: Subscription;
jest.setTimeout(90_000);

const events: ConsumedMessage[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment'] });
  admin = await adminSession(stack);
  buyer = await registeredUser(stack);
  emma = await createBook(stack, admin.bearer, 'Emma', 14.5);
  dune = await createBook(stack, admin.bearer, 'Dune', 9.99);
  observer = await observe(stack, [TOPICS.paymentRefundSucceeded, TOPICS.paymentRefunded], events);
}, 60_000);
afterAll(async () => {
  await observer?.stop();
  await stack?.stop();
});

const sim = () => stack.stripe!;
const refundsAtProvider = (intentId: string) =>
  sim()
    .refunds()
    .filter((refund) => refund.payment_intent === intentId);
const eventsOf = (topic: string, paymentId: string) => events.filter((m) => m.topic === topic && m.key === paymentId).map((m) => JSON.parse(m.value));
const refund = (paymentId: string, body: object, bearer = admin.bearer) =>
  request(stack.urls.payment).post(`/api/payments/${paymentId}/refunds`).set('Authorization', bearer).send(body);

const orderOf = (paymentId: string) =>
  waitFor(
    async () => {
      const res = await request(stack.urls.order).get(`/api/orders/payment/${paymentId}`).set('Authorization', buyer.bearer);
      return res.status === 200 ? (res.body as { orderId: string }) : undefined;
    },
    { what: 'the order' },
  );

/** 2 × Emma (14.50) + 1 × Dune (9.99) = 38.99, paid. */
async function paid(): Promise<{ paymentId: string; intentId: string }> {
  const { body } = await checkout(stack, buyer.bearer, [
    { bookId: emma.id, quantity: 2 },
    { bookId: dune.id, quantity: 1 },
  ]);
  await sim().confirm(body.paymentIntentId);
  await paymentWhen(stack, buyer.bearer, body.paymentId, (p) => p.status === 'SUCCESS', 'the payment SUCCESS');
  return { paymentId: body.paymentId, intentId: body.paymentIntentId };
}

describe('partial refunds (CONTRACT §11)', () => {
  it('refuses what a client gets wrong: not an admin, unknown payment, unpaid payment, a body that is not one refund', async () => {
    const { body: pending } = await checkout(stack, buyer.bearer, [{ bookId: emma.id, quantity: 1 }]);
    const { paymentId } = await paid();

    expect((await refund(paymentId, { amount: 1, reason: 'OTHER' }, buyer.bearer)).status).toBe(403);
    expect((await refund(randomUUID(), { amount: 1, reason: 'OTHER' })).status).toBe(404);
    const unpaid = await refund(pending.paymentId, { amount: 1, reason: 'OTHER' });
    expect(unpaid.status).toBe(409);
    expect(unpaid.body.message).toMatch(/PAYMENT_PENDING, not SUCCESS/);
    for (const body of [
      { reason: 'OTHER' },
      { amount: 1, items: [{ bookId: emma.id, quantity: 1 }], reason: 'OTHER' },
      { amount: 1, reason: 'CHANGED_MY_MIND' },
      { amount: 1.234, reason: 'OTHER' },
      { amount: 0, reason: 'OTHER' },
      { amount: 1, reason: 'OTHER', note: 'x'.repeat(501) },
      { amount: 1, reason: 'OTHER', restock: true },
    ]) {
      const res = await refund(paymentId, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
    expect((await refund(paymentId, { items: [{ bookId: randomUUID(), quantity: 1 }], reason: 'OTHER' })).status).toBe(400);
    expect(refundsAtProvider(pending.paymentIntentId)).toEqual([]);
  });

  it('adds partial refunds up, refuses more than is left (409), and the refund that reaches the total makes the payment REFUNDED', async () => {
    const { paymentId, intentId } = await paid();

    const byAmount = await refund(paymentId, { amount: 5, reason: 'DAMAGED', note: 'Cover torn' });
    expect(byAmount.status).toBe(201);
    expect(byAmount.body).toMatchObject({ paymentId, amount: 5, reason: 'DAMAGED', note: 'Cover torn', items: [], restock: false, status: 'SUCCEEDED' });
    const byItems = await refund(paymentId, { items: [{ bookId: emma.id, quantity: 1 }], reason: 'REQUESTED_BY_CUSTOMER', restock: true });
    expect(byItems.status).toBe(201);
    expect(byItems.body).toMatchObject({ amount: 14.5, items: [{ bookId: emma.id, quantity: 1 }], restock: true, status: 'SUCCEEDED' });

    const midway = await paymentWhen(stack, buyer.bearer, paymentId, () => true, 'the payment');
    expect(midway).toMatchObject({ status: 'SUCCESS', refundedAmount: 19.5 });
    expect(midway.refunds).toEqual([expect.objectContaining({ refundId: byAmount.body.refundId }), expect.objectContaining({ refundId: byItems.body.refundId })]);
    const listed = await request(stack.urls.payment).get(`/api/payments/${paymentId}/refunds`).set('Authorization', buyer.bearer);
    expect(listed.body.map((r: { amount: number }) => r.amount)).toEqual([5, 14.5]);

    const copies = await refund(paymentId, { items: [{ bookId: emma.id, quantity: 2 }], reason: 'OTHER' });
    expect(copies.status).toBe(409);
    expect(copies.body.message).toBe(`Refund exceeds the copies left of book ${emma.id}: 1`);
    const tooMuch = await refund(paymentId, { amount: 19.5, reason: 'OTHER' });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body.message).toBe('Refund exceeds the amount left: 19.49');

    // Each refund went to the provider on its own: two refunds, two amounts.
    expect(refundsAtProvider(intentId).map((r) => r.amount)).toEqual([500, 1450]);
    const last = await graphql(stack.urls.payment, 'mutation ($id: ID!, $input: RefundInput!) { refundPayment(paymentId: $id, input: $input) { amount reason status } }', {
      bearer: admin.bearer,
      variables: { id: paymentId, input: { amount: '19.49', reason: 'OTHER' } },
    });
    expect(last.body).toEqual({ data: { refundPayment: { amount: '19.49', reason: 'OTHER', status: 'SUCCEEDED' } } });
    const done = await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'REFUNDED', 'the payment REFUNDED');
    expect(done.refundedAmount).toBe(38.99);
    expect((await refund(paymentId, { amount: 0.01, reason: 'OTHER' })).status).toBe(409);

    const succeeded = await waitFor(() => (eventsOf(TOPICS.paymentRefundSucceeded, paymentId).length === 3 ? eventsOf(TOPICS.paymentRefundSucceeded, paymentId) : undefined), {
      what: 'three payment-refund-succeeded',
    });
    expect(succeeded.map((e) => [e.amount, e.refundedAmount, e.full, e.restock])).toEqual([
      [5, 5, false, false],
      [14.5, 19.5, false, true],
      [19.49, 38.99, true, false],
    ]);
    expect(succeeded[1].items).toEqual([{ bookId: emma.id, bookTitle: 'Emma', quantity: 1, price: 14.5 }]);
    await waitFor(() => eventsOf(TOPICS.paymentRefunded, paymentId).length === 1, { what: 'payment-refunded' });

    // The provider's webhooks for these refunds, delivered again, change nothing.
    const delivered = sim()
      .events()
      .filter((e) => (e.data.object as { payment_intent?: string }).payment_intent === intentId && /^(refund|charge)\./.test(e.type));
    expect(delivered.length).toBe(6);
    for (const event of delivered.reverse()) await sim().resend(event.id);
    expect(await paymentWhen(stack, buyer.bearer, paymentId, () => true, 'the payment')).toMatchObject({ status: 'REFUNDED', refundedAmount: 38.99 });
    expect(eventsOf(TOPICS.paymentRefundSucceeded, paymentId)).toHaveLength(3);
    expect(eventsOf(TOPICS.paymentRefunded, paymentId)).toHaveLength(1);
  });

  it('lets one of two refunds racing for the last amount through, and refuses the other', async () => {
    const { paymentId, intentId } = await paid();
    expect((await refund(paymentId, { amount: 30, reason: 'OTHER' })).status).toBe(201);

    const answers = await Promise.all([refund(paymentId, { amount: 8.99, reason: 'DUPLICATE' }), refund(paymentId, { amount: 8.99, reason: 'DUPLICATE' })]);

    expect(answers.map((res) => res.status).sort()).toEqual([201, 409]);
    expect(answers.find((res) => res.status === 409)?.body.message).toBe('Refund exceeds the amount left: 0.00');
    expect(refundsAtProvider(intentId).map((r) => r.amount)).toEqual([3000, 899]);
    expect(await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'REFUNDED', 'REFUNDED')).toMatchObject({ refundedAmount: 38.99 });
  });

  it('keeps a refund the provider takes as pending PENDING until refund.updated settles it, once, whatever the redeliveries and their order', async () => {
    const { paymentId } = await paid();
    sim().injectFaults({ pendingRefunds: 2 });
    const kept = await refund(paymentId, { amount: 10, reason: 'OTHER' });
    const lost = await refund(paymentId, { amount: 20, reason: 'FRAUDULENT' });
    expect([kept.body.status, lost.body.status]).toEqual(['PENDING', 'PENDING']);
    // Pending refunds hold their amounts.
    expect((await refund(paymentId, { amount: 9, reason: 'OTHER' })).body.message).toBe('Refund exceeds the amount left: 8.99');

    const atProvider = (refundId: string) =>
      sim()
        .refunds()
        .find((r) => r.metadata.refundId === refundId)?.id ?? '';
    const succeeded = await sim().settleRefund(atProvider(kept.body.refundId), 'succeeded');
    const failed = await sim().settleRefund(atProvider(lost.body.refundId), 'failed');
    // Each delivered again, and the refunds' older refund.created (still pending) after them.
    await sim().resend(succeeded.event.event.id);
    await sim().resend(failed.event.event.id);
    const created = sim()
      .events()
      .filter((e) => e.type === 'refund.created' && [kept.body.refundId, lost.body.refundId].includes((e.data.object as { metadata?: { refundId?: string } }).metadata?.refundId));
    expect(created).toHaveLength(2);
    for (const event of created) await sim().resend(event.id);

    const settled = await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.refundedAmount === 10, 'the kept refund SUCCEEDED');
    expect(settled.status).toBe('SUCCESS');
    expect((settled.refunds as { amount: number; status: string }[]).map((r) => [r.amount, r.status])).toEqual([
      [10, 'SUCCEEDED'],
      [20, 'FAILED'],
    ]);
    // The failed refund's amount is free again: what is left now makes the payment REFUNDED.
    const rest = await refund(paymentId, { amount: 28.99, reason: 'OTHER' });
    expect(rest.body).toMatchObject({ status: 'SUCCEEDED' });
    await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'REFUNDED', 'REFUNDED');
    const succeededEvents = await waitFor(
      () => (eventsOf(TOPICS.paymentRefundSucceeded, paymentId).length === 2 ? eventsOf(TOPICS.paymentRefundSucceeded, paymentId) : undefined),
      {
        what: 'two payment-refund-succeeded',
      },
    );
    expect(succeededEvents.map((e) => [e.amount, e.full])).toEqual([
      [10, false],
      [28.99, true],
    ]);
  });

  it("keeps what a cancel's refund refused for now is for: no partial refund takes it, and its retry refunds it", async () => {
    const { paymentId, intentId } = await paid();
    const order = await orderOf(paymentId);
    sim().injectFaults({ refuseRefunds: 1 });
    expect((await request(stack.urls.order).post(`/api/orders/${order.orderId}/cancel`).set('Authorization', buyer.bearer)).status).toBe(204);
    const parked = await waitFor(
      async () =>
        ((await paymentWhen(stack, buyer.bearer, paymentId, () => true, 'the payment')).refunds as { refundId: string; status: string }[]).find((r) => r.status === 'FAILED'),
      { what: "the cancel's refund FAILED" },
    );

    const taken = await refund(paymentId, { amount: 1, reason: 'OTHER' });
    expect(taken.status).toBe(409);
    expect(taken.body.message).toBe('Refund exceeds the amount left: 0.00');
    const retried = await request(stack.urls.payment).post(`/api/payments/refunds/${parked.refundId}/retry`).set('Authorization', admin.bearer);
    expect(retried.body).toMatchObject({ amount: 38.99, status: 'SUCCEEDED' });
    await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'REFUNDED', 'REFUNDED');
    expect(refundsAtProvider(intentId).map((r) => r.amount)).toEqual([3899]);
  });

  it('has a cancel wait for the outcome of a refund still being asked of the provider, and refund what that one did not get', async () => {
    const { paymentId, intentId } = await paid();
    const order = await orderOf(paymentId);
    sim().injectFaults({ refuseRefunds: 1, delayMs: 1500 });
    try {
      const asked = refund(paymentId, { amount: 38.99, reason: 'OTHER' }).then((res) => res);
      await waitFor(async () => (await request(stack.urls.payment).get(`/api/payments/${paymentId}/refunds`).set('Authorization', admin.bearer)).body.length === 1, {
        what: 'the refund asked of the provider',
      });
      expect((await request(stack.urls.order).post(`/api/orders/${order.orderId}/cancel`).set('Authorization', buyer.bearer)).status).toBe(204);
      expect((await asked).body).toMatchObject({ amount: 38.99, status: 'FAILED' });
      await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'REFUNDED', 'REFUNDED by the cancel');
    } finally {
      sim().injectFaults({ delayMs: 0 });
    }
    expect(refundsAtProvider(intentId).map((r) => r.amount)).toEqual([3899]);
  });

  it('has a cancel refund what is left after a partial refund, for the copies not refunded yet', async () => {
    const { paymentId, intentId } = await paid();
    expect((await refund(paymentId, { items: [{ bookId: dune.id, quantity: 1 }], reason: 'DAMAGED' })).status).toBe(201);
    const order = await orderOf(paymentId);

    expect((await request(stack.urls.order).post(`/api/orders/${order.orderId}/cancel`).set('Authorization', buyer.bearer)).status).toBe(204);

    await paymentWhen(stack, buyer.bearer, paymentId, (p) => p.status === 'REFUNDED', 'REFUNDED by the cancel');
    expect(refundsAtProvider(intentId).map((r) => r.amount)).toEqual([999, 2900]);
    const cancels = await waitFor(() => (eventsOf(TOPICS.paymentRefundSucceeded, paymentId).length === 2 ? eventsOf(TOPICS.paymentRefundSucceeded, paymentId) : undefined), {
      what: 'both refunds succeeded',
    });
    expect(cancels[1]).toMatchObject({ amount: 29, full: true, restock: false, items: [{ bookId: emma.id, quantity: 2 }] });
  });
});
