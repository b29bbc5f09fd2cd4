import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ConsumedMessage, Subscription } from '../../platform/events/bus';
import { TOPICS, type PaymentRefundedEvent, type PaymentSuccessEvent } from '../../platform/events/topics';
import { adminSession, expectEnvelope, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';

let stack: Stack;
let observer: Subscription;
const orderCreated: ConsumedMessage[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['order'] });
  observer = await stack.bus.subscribe({ groupId: `observer-${randomUUID()}`, topics: [TOPICS.orderCreated], handle: async (m) => void orderCreated.push(m) });
});
afterAll(async () => {
  await observer?.stop();
  await stack?.stop();
});

const orders = () => request(stack.urls.order);

function paymentSuccess(userId: string, overrides: Partial<PaymentSuccessEvent> = {}): PaymentSuccessEvent {
  return {
    eventId: randomUUID(),
    type: 'PaymentSuccessEvent',
    occurredAt: new Date().toISOString(),
    paymentId: randomUUID(),
    checkoutId: randomUUID(),
    userId,
    transactionId: `pi_${randomUUID().replace(/-/g, '')}`,
    amount: 60.07,
    items: [
      { bookId: randomUUID(), bookTitle: 'Middlemarch', quantity: 3, price: 19.99 },
      { bookId: randomUUID(), bookTitle: 'Bookmark', quantity: 1, price: 0.1 },
    ],
    email: 'reader@example.com',
    firstName: 'Ada',
    phoneNumber: '+14155550100',
    ...overrides,
  };
}

async function publish(topic: string, event: { paymentId: string; eventId: string }): Promise<void> {
  await stack.bus.publish([{ topic, key: event.paymentId, value: JSON.stringify(event) }]);
}

async function orderFor(bearer: string, paymentId: string) {
  return waitFor(
    async () => {
      const res = await orders().get(`/api/orders/payment/${paymentId}`).set('Authorization', bearer);
      return res.status === 200 ? res : undefined;
    },
    { what: `the order of payment ${paymentId}` },
  );
}

describe('an order from payment-success', () => {
  it('is created once, CONFIRMED, with the payment\'s items and total, and announced by order-created', async () => {
    const buyer = await registeredUser(stack);
    const event = paymentSuccess(buyer.userId);
    const before = await orders().get(`/api/orders/payment/${event.paymentId}`).set('Authorization', buyer.bearer);
    expectEnvelope(before, 404, `Order not ready for payment: ${event.paymentId}`);

    await publish(TOPICS.paymentSuccess, event);
    const res = await orderFor(buyer.bearer, event.paymentId);
    expect(res.body).toEqual({
      orderId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      paymentId: event.paymentId,
      userId: buyer.userId,
      totalAmount: 60.07,
      status: 'CONFIRMED',
      items: event.items,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/),
      updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/),
    });
    const announced = await waitFor(() => orderCreated.find((m) => JSON.parse(m.value).paymentId === event.paymentId), { what: 'order-created' });
    expect(announced.key).toBe(res.body.orderId);
    expect(JSON.parse(announced.value)).toMatchObject({ type: 'OrderCreatedEvent', orderId: res.body.orderId, userId: buyer.userId, totalAmount: 60.07, status: 'CONFIRMED' });
  });

  it('stays one order when the same event arrives five times, or again with another eventId', async () => {
    const buyer = await registeredUser(stack);
    const event = paymentSuccess(buyer.userId);
    for (let i = 0; i < 5; i += 1) await publish(TOPICS.paymentSuccess, event);
    await publish(TOPICS.paymentSuccess, { ...event, eventId: randomUUID() });
    const marker = paymentSuccess(buyer.userId);
    await publish(TOPICS.paymentSuccess, marker);
    await orderFor(buyer.bearer, marker.paymentId);
    const mine = await orders().get('/api/orders/me').set('Authorization', buyer.bearer);
    expect(mine.status).toBe(200);
    expect(mine.body.map((o: { paymentId: string }) => o.paymentId).sort()).toEqual([event.paymentId, marker.paymentId].sort());
  });
});

describe('reading orders', () => {
  it('shows an order to its owner and admins, and as not found to anyone else', async () => {
    const owner = await registeredUser(stack);
    const other = await registeredUser(stack);
    const admin = await adminSession(stack);
    const event = paymentSuccess(owner.userId);
    await publish(TOPICS.paymentSuccess, event);
    const { body: order } = await orderFor(owner.bearer, event.paymentId);

    expect((await orders().get(`/api/orders/${order.orderId}`).set('Authorization', owner.bearer)).body).toEqual(order);
    expect((await orders().get(`/api/orders/${order.orderId}`).set('Authorization', admin.bearer)).status).toBe(200);
    expectEnvelope(await orders().get(`/api/orders/${order.orderId}`).set('Authorization', other.bearer), 404, `Order not found: ${order.orderId}`);
    expectEnvelope(await orders().get(`/api/orders/payment/${event.paymentId}`).set('Authorization', other.bearer), 404);
    expect((await orders().get('/api/orders/me').set('Authorization', other.bearer)).body).toEqual([]);
  });

  it('lists every order to an admin only', async () => {
    const buyer = await registeredUser(stack);
    const admin = await adminSession(stack);
    const event = paymentSuccess(buyer.userId);
    await publish(TOPICS.paymentSuccess, event);
    await orderFor(buyer.bearer, event.paymentId);
    const all = await orders().get('/api/orders').query({ limit: 200 }).set('Authorization', admin.bearer);
    expect(all.status).toBe(200);
    expect(all.body.some((o: { paymentId: string }) => o.paymentId === event.paymentId)).toBe(true);
    expectEnvelope(await orders().get('/api/orders').set('Authorization', buyer.bearer), 403);
    expectEnvelope(await orders().get('/api/orders').query({ limit: 0 }).set('Authorization', admin.bearer), 400);
  });

  it('answers 401 without a token and 400 for a non-UUID id', async () => {
    expectEnvelope(await orders().get('/api/orders/me'), 401, 'Authentication is required to access this resource');
    const buyer = await registeredUser(stack);
    expectEnvelope(await orders().get('/api/orders/not-a-uuid').set('Authorization', buyer.bearer), 400);
  });
});

describe('PUT /api/orders/{id}/status', () => {
  async function newOrder() {
    const buyer = await registeredUser(stack);
    const event = paymentSuccess(buyer.userId);
    await publish(TOPICS.paymentSuccess, event);
    const { body } = await orderFor(buyer.bearer, event.paymentId);
    return { buyer, order: body as { orderId: string; paymentId: string } };
  }
  const move = (bearer: string, id: string, status: string) => orders().put(`/api/orders/${id}/status`).query({ status }).set('Authorization', bearer);

  it('moves forward CONFIRMED → PROCESSING → SHIPPED → DELIVERED and refuses anything else with 409', async () => {
    const admin = await adminSession(stack);
    const { order } = await newOrder();
    expectEnvelope(await move(admin.bearer, order.orderId, 'SHIPPED'), 409);
    for (const status of ['PROCESSING', 'SHIPPED', 'DELIVERED']) {
      const res = await move(admin.bearer, order.orderId, status);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(status);
    }
    expectEnvelope(await move(admin.bearer, order.orderId, 'CANCELLED'), 409);
    expectEnvelope(await move(admin.bearer, order.orderId, 'DELIVERED'), 409);
    expect((await orders().get(`/api/orders/${order.orderId}`).set('Authorization', admin.bearer)).body.status).toBe('DELIVERED');
  });

  it('cancels before SHIPPED only', async () => {
    const admin = await adminSession(stack);
    const { order } = await newOrder();
    expect((await move(admin.bearer, order.orderId, 'PROCESSING')).status).toBe(200);
    expect((await move(admin.bearer, order.orderId, 'CANCELLED')).body.status).toBe('CANCELLED');
    const second = await newOrder();
    await move(admin.bearer, second.order.orderId, 'PROCESSING');
    await move(admin.bearer, second.order.orderId, 'SHIPPED');
    expectEnvelope(await move(admin.bearer, second.order.orderId, 'CANCELLED'), 409);
  });

  it('is for admins: 403 for the owner, 400 for an unknown status, 404 for an unknown order', async () => {
    const admin = await adminSession(stack);
    const { buyer, order } = await newOrder();
    expectEnvelope(await move(buyer.bearer, order.orderId, 'PROCESSING'), 403);
    expectEnvelope(await move(admin.bearer, order.orderId, 'LOST'), 400);
    expectEnvelope(await orders().put(`/api/orders/${order.orderId}/status`).set('Authorization', admin.bearer), 400);
    expectEnvelope(await move(admin.bearer, randomUUID(), 'PROCESSING'), 404);
  });

  it('becomes REFUNDED when the payment is refunded', async () => {
    const { buyer, order } = await newOrder();
    const refund: PaymentRefundedEvent = {
      eventId: randomUUID(),
      type: 'PaymentRefundedEvent',
      occurredAt: new Date().toISOString(),
      paymentId: order.paymentId,
      userId: buyer.userId,
      transactionId: 'pi_x',
      amount: 60.07,
    };
    await publish(TOPICS.paymentRefunded, refund);
    await waitFor(async () => (await orders().get(`/api/orders/${order.orderId}`).set('Authorization', buyer.bearer)).body.status === 'REFUNDED', { what: 'REFUNDED' });
  });
});
