import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ConsumedMessage, Subscription } from '../../platform/events/bus';
import { ProcessedEvent, consumerGroupOf } from '../../platform/events/consumer';
import { TOPICS, type PaymentSuccessEvent } from '../../platform/events/topics';
import { paymentRefundFailedEvent, paymentRefundedEvent, paymentSuccessEvent } from '../../test/event-fixtures';
import { adminSession, expectEnvelope, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';

let stack: Stack;
let observer: Subscription;
const orderCreated: ConsumedMessage[] = [];
const orderCancelled: ConsumedMessage[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order'] });
  observer = await stack.bus.subscribe({
    groupId: `observer-${randomUUID()}`,
    topics: [TOPICS.orderCreated, TOPICS.orderCancelled],
    handle: async (m) => void (m.topic === TOPICS.orderCancelled ? orderCancelled : orderCreated).push(m),
  });
});
afterAll(async () => {
  await observer?.stop();
  await stack?.stop();
});

const orders = () => request(stack.urls.order);

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
  it("is created once, CONFIRMED, with the payment's items and total, and announced by order-created", async () => {
    const buyer = await registeredUser(stack);
    const event = paymentSuccessEvent(buyer.userId);
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
      refundStatus: null,
      cancellationReason: null,
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
    const event = paymentSuccessEvent(buyer.userId);
    for (let i = 0; i < 5; i += 1) await publish(TOPICS.paymentSuccess, event);
    await publish(TOPICS.paymentSuccess, { ...event, eventId: randomUUID() });
    const marker = paymentSuccessEvent(buyer.userId);
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
    const event = paymentSuccessEvent(owner.userId);
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
    const event = paymentSuccessEvent(buyer.userId);
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
    const event = paymentSuccessEvent(buyer.userId);
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
    const refund = paymentRefundedEvent({ paymentId: order.paymentId, userId: buyer.userId, transactionId: 'pi_x', amount: 60.07 });
    await publish(TOPICS.paymentRefunded, refund);
    await waitFor(async () => (await orders().get(`/api/orders/${order.orderId}`).set('Authorization', buyer.bearer)).body.status === 'REFUNDED', { what: 'REFUNDED' });
  });
});

async function paidOrder(buyer: { userId: string; bearer: string }, overrides: Partial<PaymentSuccessEvent> = {}) {
  const event = paymentSuccessEvent(buyer.userId, overrides);
  await publish(TOPICS.paymentSuccess, event);
  const { body } = await orderFor(buyer.bearer, event.paymentId);
  return { event, order: body as { orderId: string; paymentId: string; status: string; createdAt: string } };
}

const cancelledFor = (orderId: string) => orderCancelled.filter((m) => m.key === orderId).map((m) => JSON.parse(m.value));

describe('POST /api/orders/{id}/cancel', () => {
  const cancel = (bearer: string, id: string) => orders().post(`/api/orders/${id}/cancel`).set('Authorization', bearer);
  const move = (bearer: string, id: string, status: string) => orders().put(`/api/orders/${id}/status`).query({ status }).set('Authorization', bearer);
  /** Cancels a later order of `buyer` and waits for its order-cancelled: the point after which a test counts an earlier order's. */
  async function cancelLaterOrder(buyer: { userId: string; bearer: string }): Promise<void> {
    const marker = await paidOrder(buyer);
    expect((await cancel(buyer.bearer, marker.order.orderId)).status).toBe(204);
    await waitFor(() => cancelledFor(marker.order.orderId).length === 1 || undefined, { what: 'the later order-cancelled' });
  }

  it('lets the owner cancel a CONFIRMED order: 204, CANCELLED, and order-cancelled with the lines', async () => {
    const buyer = await registeredUser(stack);
    const { event, order } = await paidOrder(buyer);
    const res = await cancel(buyer.bearer, order.orderId);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const after = await orders().get(`/api/orders/${order.orderId}`).set('Authorization', buyer.bearer);
    expect(after.body.status).toBe('CANCELLED');
    const [announced] = await waitFor(() => (cancelledFor(order.orderId).length > 0 ? cancelledFor(order.orderId) : undefined), { what: 'order-cancelled' });
    expect(announced).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'OrderCancelledEvent',
      occurredAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      orderId: order.orderId,
      paymentId: event.paymentId,
      userId: buyer.userId,
      items: event.items,
    });
  });

  it('answers 409 to a second cancel, and publishes order-cancelled once', async () => {
    const buyer = await registeredUser(stack);
    const { order } = await paidOrder(buyer);
    expect((await cancel(buyer.bearer, order.orderId)).status).toBe(204);
    expectEnvelope(await cancel(buyer.bearer, order.orderId), 409, 'Order cannot be cancelled in status: CANCELLED');
    await waitFor(() => cancelledFor(order.orderId).length === 1 || undefined, { what: 'order-cancelled' });
    await cancelLaterOrder(buyer);
    expect(cancelledFor(order.orderId)).toHaveLength(1);
  });

  it('cancels once when the owner and an admin cancel at the same moment', async () => {
    const admin = await adminSession(stack);
    const buyer = await registeredUser(stack);
    const { order } = await paidOrder(buyer);
    const answers = await Promise.all([cancel(buyer.bearer, order.orderId), cancel(admin.bearer, order.orderId)]);
    expect(answers.map((res) => res.status).sort()).toEqual([204, 409]);
    expectEnvelope(
      answers.find((res) => res.status === 409)!,
      409,
      'Order cannot be cancelled in status: CANCELLED',
    );
    await cancelLaterOrder(buyer);
    expect(cancelledFor(order.orderId)).toHaveLength(1);
  });

  it('lets an admin cancel a PROCESSING order, and refuses SHIPPED, DELIVERED and REFUNDED orders with 409', async () => {
    const admin = await adminSession(stack);
    const buyer = await registeredUser(stack);
    const processing = await paidOrder(buyer);
    expect((await move(admin.bearer, processing.order.orderId, 'PROCESSING')).status).toBe(200);
    expect((await cancel(admin.bearer, processing.order.orderId)).status).toBe(204);

    const shipped = await paidOrder(buyer);
    await move(admin.bearer, shipped.order.orderId, 'PROCESSING');
    await move(admin.bearer, shipped.order.orderId, 'SHIPPED');
    expectEnvelope(await cancel(buyer.bearer, shipped.order.orderId), 409, 'Order cannot be cancelled in status: SHIPPED');
    await move(admin.bearer, shipped.order.orderId, 'DELIVERED');
    expectEnvelope(await cancel(admin.bearer, shipped.order.orderId), 409, 'Order cannot be cancelled in status: DELIVERED');

    const refunded = await paidOrder(buyer);
    await publish(TOPICS.paymentRefunded, paymentRefundedEvent(refunded.event));
    await waitFor(async () => (await orders().get(`/api/orders/${refunded.order.orderId}`).set('Authorization', buyer.bearer)).body.status === 'REFUNDED', { what: 'REFUNDED' });
    expectEnvelope(await cancel(buyer.bearer, refunded.order.orderId), 409, 'Order cannot be cancelled in status: REFUNDED');
    expect((await orders().get(`/api/orders/${shipped.order.orderId}`).set('Authorization', buyer.bearer)).body.status).toBe('DELIVERED');
  });

  it('tells anyone but the owner or an admin that the order does not exist, and leaves it alone', async () => {
    const buyer = await registeredUser(stack);
    const other = await registeredUser(stack);
    const { order } = await paidOrder(buyer);
    expectEnvelope(await cancel(other.bearer, order.orderId), 404, `Order not found: ${order.orderId}`);
    const unknown = randomUUID();
    expectEnvelope(await cancel(buyer.bearer, unknown), 404, `Order not found: ${unknown}`);
    expect((await orders().get(`/api/orders/${order.orderId}`).set('Authorization', buyer.bearer)).body.status).toBe('CONFIRMED');
  });

  it('answers 401 without a token, 400 for a non-UUID id and 405 for another method', async () => {
    const buyer = await registeredUser(stack);
    const { order } = await paidOrder(buyer);
    expectEnvelope(await orders().post(`/api/orders/${order.orderId}/cancel`), 401, 'Authentication is required to access this resource');
    expectEnvelope(await cancel(buyer.bearer, 'not-a-uuid'), 400);
    expectEnvelope(await orders().get(`/api/orders/${order.orderId}/cancel`).set('Authorization', buyer.bearer), 405);
  });

  it('is what an admin moving the order to CANCELLED does too: order-cancelled is published', async () => {
    const admin = await adminSession(stack);
    const buyer = await registeredUser(stack);
    const { order } = await paidOrder(buyer);
    expect((await move(admin.bearer, order.orderId, 'CANCELLED')).body.status).toBe('CANCELLED');
    const [announced] = await waitFor(() => (cancelledFor(order.orderId).length > 0 ? cancelledFor(order.orderId) : undefined), { what: 'order-cancelled' });
    expect(announced).toMatchObject({ type: 'OrderCancelledEvent', orderId: order.orderId, userId: buyer.userId });
  });

  it('shows where its refund stands: none, PENDING once cancelled, FAILED when refused, REFUNDED when refunded, never FAILED after', async () => {
    const buyer = await registeredUser(stack);
    const admin = await adminSession(stack);
    const { event, order } = await paidOrder(buyer);
    const refundStatus = async () => (await orders().get(`/api/orders/${order.orderId}`).set('Authorization', admin.bearer)).body.refundStatus;
    expect(await refundStatus()).toBeNull();

    expect((await cancel(buyer.bearer, order.orderId)).status).toBe(204);
    expect(await refundStatus()).toBe('PENDING');
    const refused = paymentRefundFailedEvent({ paymentId: event.paymentId, orderId: order.orderId, userId: buyer.userId });
    await publish(TOPICS.paymentRefundFailed, refused);
    await waitFor(async () => (await refundStatus()) === 'FAILED', { what: 'the refund FAILED' });

    await publish(TOPICS.paymentRefunded, paymentRefundedEvent(event));
    await waitFor(async () => (await refundStatus()) === 'REFUNDED', { what: 'the refund REFUNDED' });
    // The two topics are not ordered: a refusal read after the refund does not undo it.
    const late = { ...refused, eventId: randomUUID() };
    await publish(TOPICS.paymentRefundFailed, late);
    const handled = () => stack.services.order!.db.manager.count(ProcessedEvent, { where: { consumer: consumerGroupOf('order'), eventId: late.eventId } });
    await waitFor(async () => (await handled()) === 1, { what: 'the late refusal to be handled' });
    expect(await refundStatus()).toBe('REFUNDED');
    expect((await orders().get(`/api/orders/${order.orderId}`).set('Authorization', buyer.bearer)).body).toMatchObject({ status: 'CANCELLED', refundStatus: 'REFUNDED' });
  });

  it('keeps a cancelled order CANCELLED when its refund is reported', async () => {
    const buyer = await registeredUser(stack);
    const cancelled = await paidOrder(buyer);
    expect((await cancel(buyer.bearer, cancelled.order.orderId)).status).toBe(204);
    await publish(TOPICS.paymentRefunded, paymentRefundedEvent(cancelled.event));
    const marker = await paidOrder(buyer);
    await publish(TOPICS.paymentRefunded, paymentRefundedEvent(marker.event));
    await waitFor(async () => (await orders().get(`/api/orders/${marker.order.orderId}`).set('Authorization', buyer.bearer)).body.status === 'REFUNDED', {
      what: 'the marker REFUNDED',
    });
    expect((await orders().get(`/api/orders/${cancelled.order.orderId}`).set('Authorization', buyer.bearer)).body.status).toBe('CANCELLED');
  });
});

describe('GET /api/orders/userId?id=', () => {
  const ofUser = (bearer: string, id?: string) =>
    orders()
      .get('/api/orders/userId')
      .query(id === undefined ? {} : { id })
      .set('Authorization', bearer);

  it("gives the user their own orders, newest first, and an admin anyone's", async () => {
    const buyer = await registeredUser(stack);
    const admin = await adminSession(stack);
    const older = await paidOrder(buyer);
    const newer = await paidOrder(buyer);
    const mine = await ofUser(buyer.bearer, buyer.userId);
    expect(mine.status).toBe(200);
    const expected = [
      (await orders().get(`/api/orders/${newer.order.orderId}`).set('Authorization', buyer.bearer)).body,
      (await orders().get(`/api/orders/${older.order.orderId}`).set('Authorization', buyer.bearer)).body,
    ];
    expect(mine.body).toEqual(expected);
    expect((await ofUser(admin.bearer, buyer.userId.toUpperCase())).body).toEqual(expected);
    expect((await orders().get('/api/orders/me').set('Authorization', buyer.bearer)).body).toEqual(expected);
    expect((await ofUser(admin.bearer, randomUUID())).body).toEqual([]);
  });

  it("answers 403 for another user's orders, 400 for a missing or non-UUID id, 401 without a token", async () => {
    const buyer = await registeredUser(stack);
    const other = await registeredUser(stack);
    expectEnvelope(await ofUser(other.bearer, buyer.userId), 403, "Cannot access another user's orders");
    expectEnvelope(await ofUser(buyer.bearer), 400);
    expectEnvelope(await ofUser(buyer.bearer, 'me'), 400);
    expectEnvelope(await orders().get('/api/orders/userId').query({ id: buyer.userId }), 401, 'Authentication is required to access this resource');
  });
});

describe('GET /api/orders (admin list)', () => {
  it('gives every order newest first with X-Total-Count, and pages with limit and offset', async () => {
    const admin = await adminSession(stack);
    const buyer = await registeredUser(stack);
    await paidOrder(buyer);
    await paidOrder(buyer);
    const all = await orders().get('/api/orders/').set('Authorization', admin.bearer);
    expect(all.status).toBe(200);
    const total = Number(all.headers['x-total-count']);
    expect(all.body).toHaveLength(total);
    const created = all.body.map((o: { createdAt: string }) => o.createdAt);
    expect(created).toEqual([...created].sort().reverse());

    const page = await orders().get('/api/orders').query({ limit: 2, offset: 1 }).set('Authorization', admin.bearer);
    expect(page.status).toBe(200);
    expect(page.headers['x-total-count']).toBe(String(total));
    expect(page.body).toEqual(all.body.slice(1, 3));
    const rest = await orders().get('/api/orders').query({ offset: 1 }).set('Authorization', admin.bearer);
    expect(rest.body).toEqual(all.body.slice(1));

    const cancelled = await orders().get('/api/orders').query({ status: 'CANCELLED' }).set('Authorization', admin.bearer);
    expect(Number(cancelled.headers['x-total-count'])).toBe(cancelled.body.length);
    expect(cancelled.body.every((o: { status: string }) => o.status === 'CANCELLED')).toBe(true);
    expectEnvelope(await orders().get('/api/orders').query({ offset: -1 }).set('Authorization', admin.bearer), 400);
  });
});
