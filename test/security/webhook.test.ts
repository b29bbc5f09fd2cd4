/**
 * The Stripe webhook through the gateway under replay and tampering (issue 8, item 4): the same
 * signed event again changes nothing and publishes nothing; an old signature, a signature for another
 * body or from another secret is 400 "Invalid webhook signature" and changes nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Subscription } from '../../platform/events/bus';
import { TOPICS } from '../../platform/events/topics';
import { signatureHeader } from '../../simulators/stripe/simulator';
import { Payment, ProviderEvent } from '../../subgraphs/payment/entities';
import { createBook, type CatalogueBook } from '../commerce';
import { adminSession, expectEnvelope, registeredUser, waitFor, WEBHOOK_SECRET } from '../harness';
import { send, startSystem, type Answer, type System } from '../hostile';

let system: System;
let buyer: Awaited<ReturnType<typeof registeredUser>>;
let book: CatalogueBook;
let watch: Subscription;
/** Every payment-success event published, by paymentId. */
const published = new Map<string, number>();

beforeAll(async () => {
  system = await startSystem();
  const admin = await adminSession(system.stack);
  buyer = await registeredUser(system.stack);
  book = await createBook(system.stack, admin.bearer, 'Signed Copies', 20);
  watch = await system.stack.bus.subscribe({
    groupId: 'security-webhook-watch',
    topics: [TOPICS.paymentSuccess],
    handle: async (message) => {
      const { paymentId } = JSON.parse(message.value) as { paymentId: string };
      published.set(paymentId, (published.get(paymentId) ?? 0) + 1);
    },
  });
}, 60_000);
afterAll(async () => {
  await watch?.stop();
  await system?.stop();
});

const now = () => Math.floor(Date.now() / 1000);

async function pendingCheckout(): Promise<{ paymentId: string; intentId: string }> {
  const answer = await send(system.url, {
    method: 'POST',
    path: '/api/payments/checkout',
    headers: { Authorization: buyer.bearer, 'Content-Type': 'application/json' },
    body: JSON.stringify({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] }),
  });
  expect(answer.status).toBe(200);
  const body = answer.json as { paymentId: string; paymentIntentId: string };
  return { paymentId: body.paymentId, intentId: body.paymentIntentId };
}

/** A provider event as Stripe sends it, as the exact bytes that get signed. */
function eventPayload(type: string, object: Record<string, unknown>, id = `evt_${randomUUID().replace(/-/g, '')}`): { id: string; payload: string } {
  return { id, payload: JSON.stringify({ id, object: 'event', type, created: now(), livemode: false, data: { object } }) };
}

function deliver(payload: string, signature: string): Promise<Answer> {
  return send(system.url, { method: 'POST', path: '/api/payments/webhook', headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature }, body: payload });
}

const paymentRow = (id: string) => system.stack.services.payment!.db.manager.findOneByOrFail(Payment, { id });
const eventRows = (paymentId: string) => system.stack.services.payment!.db.manager.find(ProviderEvent, { where: { paymentId }, order: { receivedAt: 'ASC' } });

function expectInvalidSignature(answer: Answer): void {
  expectEnvelope(answer);
  expect([answer.status, (answer.json as { message: string }).message]).toEqual([400, 'Invalid webhook signature']);
}

describe('a signed provider event delivered again', () => {
  it('is acknowledged each time and applied once: one SUCCESS, one order, one payment-success event', async () => {
    const { paymentId, intentId } = await pendingCheckout();
    const succeeded = eventPayload('payment_intent.succeeded', { id: intentId, object: 'payment_intent', amount: 2000, status: 'succeeded' });
    const signature = signatureHeader(succeeded.payload, WEBHOOK_SECRET);

    const first = await deliver(succeeded.payload, signature);
    expect([first.status, first.text]).toEqual([200, 'Webhook received']);
    await waitFor(async () => (await paymentRow(paymentId)).orderId !== null, { what: 'the order of the paid payment' });
    await waitFor(() => published.get(paymentId) === 1, { what: 'the payment-success event' });
    const before = await paymentRow(paymentId);

    // The same bytes and signature, replayed at once and one after another.
    const replays = [...(await Promise.all([1, 2, 3].map(() => deliver(succeeded.payload, signature)))), await deliver(succeeded.payload, signature)];
    for (const replay of replays) expect([replay.status, replay.text]).toEqual([200, 'Webhook received']);

    expect(await paymentRow(paymentId)).toEqual(before);
    expect((await eventRows(paymentId)).map((row) => [row.id, row.outcome])).toEqual([[succeeded.id, 'APPLIED']]);
    const orders = await send(system.url, { method: 'GET', path: '/api/orders/me', headers: { Authorization: buyer.bearer } });
    expect((orders.json as { paymentId: string }[]).filter((order) => order.paymentId === paymentId)).toHaveLength(1);

    // sync-order publishes payment-success once more, after anything the replays could have published
    // (same key, same partition, outbox order): seeing exactly 2 proves the replays published nothing.
    const synced = await send(system.url, { method: 'POST', path: `/api/payments/${paymentId}/sync-order`, headers: { Authorization: buyer.bearer } });
    expect(synced.status).toBe(200);
    await waitFor(() => (published.get(paymentId) ?? 0) >= 2, { what: 'the re-published payment-success' });
    expect(published.get(paymentId)).toBe(2);
  });

  it('a later event of another id replaying the same transition changes nothing either', async () => {
    const { paymentId, intentId } = await pendingCheckout();
    const object = { id: intentId, object: 'payment_intent', amount: 2000, status: 'succeeded' };
    const first = eventPayload('payment_intent.succeeded', object);
    expect((await deliver(first.payload, signatureHeader(first.payload, WEBHOOK_SECRET))).status).toBe(200);
    await waitFor(async () => (await paymentRow(paymentId)).orderId !== null, { what: 'the order' });
    const before = await paymentRow(paymentId);

    const again = eventPayload('payment_intent.succeeded', object);
    const failedLate = eventPayload('payment_intent.payment_failed', { ...object, status: 'requires_payment_method', last_payment_error: { code: 'card_declined' } });
    for (const event of [again, failedLate]) expect((await deliver(event.payload, signatureHeader(event.payload, WEBHOOK_SECRET))).status).toBe(200);
    expect(await paymentRow(paymentId)).toEqual(before);
    expect((await eventRows(paymentId)).map((row) => row.outcome)).toEqual(['APPLIED', 'IGNORED', 'IGNORED']);
  });
});

describe('a tampered or stale webhook', () => {
  let target: { paymentId: string; intentId: string };
  let succeeded: { id: string; payload: string };

  beforeAll(async () => {
    target = await pendingCheckout();
    succeeded = eventPayload('payment_intent.succeeded', { id: target.intentId, object: 'payment_intent', amount: 2000, status: 'succeeded' });
  });

  it('is 400 with a signature older than 300 s, made with the right secret', async () => {
    expectInvalidSignature(await deliver(succeeded.payload, signatureHeader(succeeded.payload, WEBHOOK_SECRET, now() - 301)));
    expectInvalidSignature(await deliver(succeeded.payload, signatureHeader(succeeded.payload, WEBHOOK_SECRET, now() - 3600)));
  });

  it('is 400 with a signature for another body, however small the difference', async () => {
    const other = eventPayload('payment_intent.succeeded', { id: target.intentId, object: 'payment_intent', amount: 1, status: 'succeeded' });
    expectInvalidSignature(await deliver(succeeded.payload, signatureHeader(other.payload, WEBHOOK_SECRET)));
    expectInvalidSignature(await deliver(`${succeeded.payload} `, signatureHeader(succeeded.payload, WEBHOOK_SECRET)));
    expectInvalidSignature(await deliver(succeeded.payload.replace('succeeded', 'canceled'), signatureHeader(succeeded.payload, WEBHOOK_SECRET)));
  });

  it('is 400 signed with another secret, with a malformed header, or without one', async () => {
    const stamp = now();
    const good = signatureHeader(succeeded.payload, WEBHOOK_SECRET, stamp);
    for (const header of [
      signatureHeader(succeeded.payload, 'whsec_attacker_secret'),
      good.replace(`t=${stamp}`, `t=${stamp + 1}`),
      good.replace('v1=', 'v0='),
      good.split(',')[1],
      `t=${stamp}`,
      'garbage',
    ]) {
      expectInvalidSignature(await deliver(succeeded.payload, header));
    }
    expectInvalidSignature(await send(system.url, { method: 'POST', path: '/api/payments/webhook', headers: { 'Content-Type': 'application/json' }, body: succeeded.payload }));
  });

  it('changed nothing: the payment is still pending and no event was recorded', async () => {
    expect((await paymentRow(target.paymentId)).status).toBe('PAYMENT_PENDING');
    expect(await eventRows(target.paymentId)).toEqual([]);
    expect(published.has(target.paymentId)).toBe(false);
    // The untampered event, freshly signed, is accepted: the refusals were about the signatures.
    expect((await deliver(succeeded.payload, signatureHeader(succeeded.payload, WEBHOOK_SECRET))).status).toBe(200);
    expect((await paymentRow(target.paymentId)).status).toBe('SUCCESS');
  });
});
