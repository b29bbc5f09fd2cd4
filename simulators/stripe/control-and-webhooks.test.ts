/**
 * What the Stripe simulator sends: the control API that settles, fails, cancels and refunds an
 * intent, the signed webhooks the real SDK verifies, and their redelivery until the endpoint accepts.
 */
import express from 'express';
import Stripe from 'stripe';
import { listen } from '../../platform/http';
import { eventually, logger, sdk, simulatorSuite, WEBHOOK_SECRET } from '../../test/stripe-simulator-suite';
import { createStripeSimulator, type ControlResult, type EventDelivery } from './simulator';

const setup = simulatorSuite();
const { control, createIntent, expectStripeEvent, receivedEvents } = setup;

describe('control API and signed webhooks', () => {
  it('confirm succeeds the intent and delivers a payment_intent.succeeded the SDK verifies', async () => {
    const intent = await createIntent();

    const res = await control(`/payment_intents/${intent.id}/confirm`);

    expect(res.status).toBe(200);
    const result = res.body as ControlResult;
    expect(result.payment_intent).toMatchObject({ id: intent.id, status: 'succeeded', amount_received: 4599, latest_charge: expect.stringMatching(/^ch_/) });
    expect(result.event).toMatchObject({ type: 'payment_intent.succeeded', status: 'delivered', attempts: [{ attempt: 1, status: 200, error: null }] });
    const event = expectStripeEvent(result.event, 'payment_intent.succeeded', intent.id);
    expect(event.data.object).toMatchObject({ object: 'payment_intent', status: 'succeeded', metadata: intent.metadata });
    expect((await setup.stripe.paymentIntents.retrieve(intent.id)).status).toBe('succeeded');
  });

  it('signs so that a tampered payload or another secret fails verification', async () => {
    const intent = await createIntent();
    const { body } = await control(`/payment_intents/${intent.id}/confirm`);
    const [received] = receivedEvents((body as ControlResult).event.id);

    expect(received.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const tampered = Buffer.from(received.raw.toString('utf8').replace('"amount": 4599', '"amount": 1'));
    expect(tampered.equals(received.raw)).toBe(false);
    expect(() => setup.stripe.webhooks.constructEvent(tampered, received.signature, WEBHOOK_SECRET)).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(() => setup.stripe.webhooks.constructEvent(received.raw, received.signature, 'whsec_other')).toThrow(Stripe.errors.StripeSignatureVerificationError);
  });

  it('fail records last_payment_error, delivers payment_intent.payment_failed, and still lets the customer pay', async () => {
    const intent = await createIntent();

    const res = await control(`/payment_intents/${intent.id}/fail`, { reason: 'insufficient_funds' });

    expect(res.status).toBe(200);
    const expected = { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', message: expect.any(String) };
    expect(res.body.payment_intent).toMatchObject({ status: 'requires_payment_method', last_payment_error: expected });
    const event = expectStripeEvent(res.body.event, 'payment_intent.payment_failed', intent.id);
    expect(event.data.object).toMatchObject({ last_payment_error: expected });

    const paid = await control(`/payment_intents/${intent.id}/confirm`);
    expect(paid.status).toBe(200);
    expect(paid.body.payment_intent).toMatchObject({ status: 'succeeded', last_payment_error: null });
  });

  it('cancel delivers payment_intent.canceled, after which confirm answers 400', async () => {
    const intent = await createIntent();

    const res = await control(`/payment_intents/${intent.id}/cancel`);

    expect(res.status).toBe(200);
    expect(res.body.payment_intent).toMatchObject({ status: 'canceled', canceled_at: expect.any(Number) });
    expectStripeEvent(res.body.event, 'payment_intent.canceled', intent.id);
    const confirm = await control(`/payment_intents/${intent.id}/confirm`);
    expect(confirm.status).toBe(400);
    expect(confirm.body).toEqual({ error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: expect.stringContaining('canceled') } });
  });

  it('refund delivers charge.refunded with the fully refunded charge, once', async () => {
    const intent = await createIntent();
    const unpaid = await control(`/payment_intents/${intent.id}/refund`);
    expect(unpaid.status).toBe(400);
    const { body: paid } = await control(`/payment_intents/${intent.id}/confirm`);

    const res = await control(`/payment_intents/${intent.id}/refund`);

    expect(res.status).toBe(200);
    const charge = { id: paid.payment_intent.latest_charge, object: 'charge', payment_intent: intent.id, amount: 4599, amount_refunded: 4599, refunded: true };
    expect(res.body.charge).toMatchObject(charge);
    expect(res.body.refund).toMatchObject({ object: 'refund', amount: 4599, payment_intent: intent.id, status: 'succeeded' });
    const event = expectStripeEvent(res.body.event, 'charge.refunded', charge.id);
    expect(event.data.object).toMatchObject(charge);
    const again = await control(`/payment_intents/${intent.id}/refund`);
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('charge_already_refunded');
  });

  it('refunds through the API with refunds.create and sends charge.refunded', async () => {
    const intent = await createIntent();
    await control(`/payment_intents/${intent.id}/confirm`);

    const refund = await setup.stripe.refunds.create({ payment_intent: intent.id, metadata: { orderId: 'o-1' } }, { idempotencyKey: `refund-${intent.id}` });

    expect(refund).toMatchObject({ object: 'refund', amount: 4599, payment_intent: intent.id, status: 'succeeded' });
    // A retry with the same key is the same refund, not a second one (nor Stripe's "already refunded").
    const retried = await setup.stripe.refunds.create({ payment_intent: intent.id, metadata: { orderId: 'o-1' } }, { idempotencyKey: `refund-${intent.id}` });
    expect(retried.id).toBe(refund.id);
    const listed = await control('/refunds', undefined, 'GET');
    expect(listed.body.data.filter((r: { payment_intent: string }) => r.payment_intent === intent.id)).toEqual([refund]);
    const received = await eventually(
      () => setup.receiver.received.find((r) => r.event?.type === 'charge.refunded' && r.event.data.object.payment_intent === intent.id),
      'charge.refunded for the refunded intent',
    );
    expect(received.event?.data.object).toMatchObject({ amount_refunded: 4599, refunded: true });
  });

  it('refunds part of a charge: refunds add up, one for more than is left is refused, and each sends refund.created and charge.refunded', async () => {
    const intent = await createIntent();
    await control(`/payment_intents/${intent.id}/confirm`);

    const first = await setup.stripe.refunds.create({ payment_intent: intent.id, amount: 1000, metadata: { refundId: 'r-1' } }, { idempotencyKey: `part-1-${intent.id}` });
    const second = await setup.stripe.refunds.create({ payment_intent: intent.id, amount: 3000 }, { idempotencyKey: `part-2-${intent.id}` });
    const tooMuch = await setup.stripe.refunds.create({ payment_intent: intent.id, amount: 600 }, { idempotencyKey: `part-3-${intent.id}` }).catch((e: unknown) => e);
    const rest = await setup.stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: `part-4-${intent.id}` });

    expect([first.amount, second.amount, rest.amount]).toEqual([1000, 3000, 599]);
    expect(tooMuch).toMatchObject({ statusCode: 400, code: 'amount_too_large', param: 'amount' });
    const charges = await eventually(() => {
      const seen = setup.receiver.received.filter((r) => r.event?.type === 'charge.refunded' && r.event.data.object.payment_intent === intent.id);
      return seen.length === 3 ? seen : undefined;
    }, 'three charge.refunded for the intent');
    const refunded = (object: unknown) => (object as { amount_refunded: number }).amount_refunded;
    expect(charges.map((r) => r.event?.data.object).sort((a, b) => refunded(a) - refunded(b))).toMatchObject([
      { amount_refunded: 1000, refunded: false },
      { amount_refunded: 4000, refunded: false },
      { amount_refunded: 4599, refunded: true },
    ]);
    const created = await eventually(
      () => setup.receiver.received.find((r) => r.event?.type === 'refund.created' && r.event.data.object.id === first.id),
      'refund.created for the first refund',
    );
    expect(created.event?.data.object).toMatchObject({ object: 'refund', amount: 1000, status: 'succeeded', metadata: { refundId: 'r-1' }, payment_intent: intent.id });
  });

  it('leaves the next refunds pending until the control API settles them, each with refund.updated', async () => {
    const intent = await createIntent();
    await control(`/payment_intents/${intent.id}/confirm`);
    expect((await control('/faults', { pendingRefunds: 2 })).body).toMatchObject({ pendingRefunds: 2 });

    const kept = await setup.stripe.refunds.create({ payment_intent: intent.id, amount: 1000 }, { idempotencyKey: `pending-1-${intent.id}` });
    const lost = await setup.stripe.refunds.create({ payment_intent: intent.id, amount: 2000 }, { idempotencyKey: `pending-2-${intent.id}` });
    expect([kept.status, lost.status]).toEqual(['pending', 'pending']);

    const succeeded = await control(`/refunds/${kept.id}/succeed`);
    const failed = await control(`/refunds/${lost.id}/fail`);
    expect(succeeded.body.event.event).toMatchObject({ type: 'refund.updated', data: { object: { id: kept.id, status: 'succeeded' } } });
    expect(failed.body.event.event).toMatchObject({ type: 'refund.updated', data: { object: { id: lost.id, status: 'failed' } } });
    expect((await control(`/refunds/${lost.id}/succeed`)).status).toBe(400);
    // The failed refund's amount can be refunded again.
    const rest = await setup.stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: `pending-3-${intent.id}` });
    expect(rest).toMatchObject({ amount: 3599, status: 'succeeded' });
  });

  it('refuses the next refund with 402 balance_insufficient, replays that for its key, and refunds under a new key', async () => {
    const intent = await createIntent();
    await control(`/payment_intents/${intent.id}/confirm`);
    const set = await control('/faults', { refuseRefunds: 1 });
    expect(set.body).toMatchObject({ refuseRefunds: 1 });

    const refuse = () => setup.stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: `refused-${intent.id}` }).catch((e: unknown) => e);
    const refused = await refuse();
    expect(refused).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(refused).toMatchObject({ statusCode: 402, code: 'balance_insufficient' });
    expect(setup.simulator.refunds().filter((r) => r.payment_intent === intent.id)).toEqual([]);
    expect(setup.simulator.injectFaults({}).refuseRefunds).toBe(0);

    // Stripe keeps the refusal for its idempotency key: only a new key asks again.
    expect(await refuse()).toMatchObject({ statusCode: 402, code: 'balance_insufficient' });
    const refund = await setup.stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: `again-${intent.id}` });
    expect(refund).toMatchObject({ status: 'succeeded', payment_intent: intent.id });
    expect(setup.simulator.refunds().filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
  });

  it('answers 404 for a control action on an unknown intent', async () => {
    const res = await control('/payment_intents/pi_unknown/confirm');

    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
  });

  it('resend delivers the same event again and records the attempt', async () => {
    const intent = await createIntent();
    const { body } = await control(`/payment_intents/${intent.id}/confirm`);
    const eventId = (body as ControlResult).event.id;

    const res = await control(`/events/${eventId}/resend`);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: eventId,
      status: 'delivered',
      attempts: [
        { attempt: 1, status: 200 },
        { attempt: 2, status: 200 },
      ],
    });
    const deliveries = receivedEvents(eventId);
    expect(deliveries).toHaveLength(2);
    expect(deliveries[1].event).toEqual(deliveries[0].event);
  });

  it('retries a rejected delivery with back-off until the receiver accepts it', async () => {
    const intent = await createIntent();
    setup.receiver.failNext = 2;

    const { body } = await control(`/payment_intents/${intent.id}/confirm`);

    expect(body.event).toMatchObject({ status: 'pending', attempts: [{ attempt: 1, status: 500, responseBody: 'try again' }] });
    const delivered = await eventually(async () => {
      const list = await control('/events', undefined, 'GET');
      return (list.body.data as EventDelivery[]).find((e) => e.id === body.event.id && e.status === 'delivered');
    }, 'the event to be delivered on a retry');
    expect(delivered.attempts.map((a) => a.status)).toEqual([500, 500, 200]);
    expect(receivedEvents(body.event.id)).toHaveLength(3);
  });

  it('rejects unknown fault settings and out-of-range values', async () => {
    expect((await control('/faults', { failNext: -1 })).status).toBe(400);
    expect((await control('/faults', { status: 200 })).status).toBe(400);
    expect((await control('/faults', { explode: true })).status).toBe(400);
    expect((await control('/faults', { refuseRefunds: -1 })).status).toBe(400);
  });
});

describe('delivery edge cases', () => {
  it('gives up after the configured attempts when the webhook URL refuses connections', async () => {
    const closed = await listen(express(), 0, '127.0.0.1');
    await closed.close();
    const isolated = createStripeSimulator({
      webhookUrl: () => `http://127.0.0.1:${closed.port}/webhook`,
      webhookSecret: WEBHOOK_SECRET,
      logger,
      webhookRetry: { attempts: 3, initialDelayMs: 10 },
    });
    const port = await isolated.start(0);
    try {
      const intent = await sdk(port).paymentIntents.create({ amount: 500, currency: 'usd' });
      const { event } = await isolated.confirm(intent.id);
      expect(event.attempts[0]).toMatchObject({ status: null, error: expect.stringMatching(/ECONNREFUSED|fetch failed/) });

      const failed = await eventually(() => isolated.deliveries().find((d) => d.id === event.id && d.status === 'failed'), 'the delivery to give up');
      expect(failed.attempts).toHaveLength(3);
    } finally {
      await isolated.stop();
    }
  });

  it('records events without delivering them when no webhook URL is configured', async () => {
    const isolated = createStripeSimulator({ webhookUrl: () => undefined, webhookSecret: WEBHOOK_SECRET, logger });
    const port = await isolated.start(0);
    try {
      const intent = await sdk(port).paymentIntents.create({ amount: 500, currency: 'usd' });

      const { event } = await isolated.confirm(intent.id);

      expect(event).toMatchObject({ status: 'not_configured', attempts: [] });
      expect(isolated.events().map((e) => e.type)).toEqual(['payment_intent.succeeded']);
    } finally {
      await isolated.stop();
    }
  });
});
