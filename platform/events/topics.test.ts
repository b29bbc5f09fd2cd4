import { randomUUID } from 'node:crypto';
import { PoisonMessageError, parseEvent } from './consumer';
import { OrderCancelledEvent, PaymentFailedEvent, PaymentSuccessEvent } from './topics';

const success = () => ({
  eventId: randomUUID(),
  type: 'PaymentSuccessEvent',
  occurredAt: '2026-11-21T10:00:00.000Z',
  paymentId: randomUUID(),
  checkoutId: randomUUID(),
  userId: randomUUID(),
  transactionId: 'pi_1',
  amount: 25.98,
  items: [{ bookId: randomUUID(), bookTitle: 'Dracula', quantity: 2, price: 12.99 }],
  email: 'ada@example.com',
  firstName: 'Ada',
  phoneNumber: '+14155550100',
});

describe('event payload validation', () => {
  it('accepts a complete payment-success event', async () => {
    const event = success();
    await expect(parseEvent(PaymentSuccessEvent, JSON.stringify(event))).resolves.toMatchObject({ paymentId: event.paymentId, amount: 25.98 });
  });

  it.each([
    ['a missing checkoutId (a field every checkout event carries)', { checkoutId: undefined }],
    ['an amount with three decimals', { amount: 1.005 }],
    ['no items', { items: [] }],
    ['an item that is not an object', { items: [[]] }],
    ['an item without a bookId', { items: [{ bookTitle: 'x', quantity: 1, price: 1 }] }],
    ['another type', { type: 'PaymentFailedEvent' }],
  ])('refuses %s', async (_name, change) => {
    await expect(parseEvent(PaymentSuccessEvent, JSON.stringify({ ...success(), ...change }))).rejects.toBeInstanceOf(PoisonMessageError);
  });

  it('holds payment-failed to the same checkout fields', async () => {
    const { items: _items, email: _e, firstName: _f, phoneNumber: _p, ...common } = success();
    const failed = { ...common, type: 'PaymentFailedEvent', reason: 'card_declined' };
    await expect(parseEvent(PaymentFailedEvent, JSON.stringify(failed))).resolves.toMatchObject({ reason: 'card_declined' });
    await expect(parseEvent(PaymentFailedEvent, JSON.stringify({ ...failed, userId: 'nope' }))).rejects.toBeInstanceOf(PoisonMessageError);
  });

  it('holds order-cancelled to the order, its payment, its user and its lines', async () => {
    const { paymentId, userId, items } = success();
    const cancelled = { eventId: randomUUID(), type: 'OrderCancelledEvent', occurredAt: '2026-11-22T10:00:00.000Z', orderId: randomUUID(), paymentId, userId, items };
    await expect(parseEvent(OrderCancelledEvent, JSON.stringify(cancelled))).resolves.toMatchObject({ orderId: cancelled.orderId, items });
    await expect(parseEvent(OrderCancelledEvent, JSON.stringify({ ...cancelled, orderId: undefined }))).rejects.toBeInstanceOf(PoisonMessageError);
    await expect(parseEvent(OrderCancelledEvent, JSON.stringify({ ...cancelled, items: [{ bookId: 'x', quantity: 1 }] }))).rejects.toBeInstanceOf(PoisonMessageError);
  });
});
