import request from 'supertest';
import { TOPICS } from '../../platform/events/topics';
import { OutgoingMail } from '../../platform/mail/entities';
import { paymentSuccessEvent } from '../../test/event-fixtures';
import { registeredUser, StackSuite, stackSuite, waitFor } from '../../test/harness';
import { errorCodes, graphql } from '../../test/graphql';
import type { OrderService } from './service';

const suite = stackSuite(new StackSuite(), { services: ['book', 'order'] });

const orders = () => (suite.stack.services.order as unknown as { orders: OrderService }).orders;
const gql = (query: string, bearer?: string, variables?: Record<string, unknown>) => graphql(suite.stack.urls.order, query, { bearer, variables });

/** An order made the way production makes one: from a payment-success event. */
async function orderFor(userId: string, bearer: string): Promise<{ orderId: string; paymentId: string; bookId: string }> {
  const event = paymentSuccessEvent(userId);
  const bookId = event.items[0].bookId;
  await suite.stack.bus.publish([{ topic: TOPICS.paymentSuccess, key: event.paymentId, value: JSON.stringify(event) }]);
  const res = await waitFor(
    async () => {
      const r = await request(suite.stack.urls.order).get(`/api/orders/payment/${event.paymentId}`).set('Authorization', bearer);
      return r.status === 200 ? r : undefined;
    },
    { what: `the order of payment ${event.paymentId}` },
  );
  return { orderId: res.body.orderId, paymentId: event.paymentId, bookId };
}

const ORDER_ENTITIES = `query ($r: [_Any!]!) {
  _entities(representations: $r) { ... on Order { orderId status totalAmount payment { paymentId } user { userId } items { bookId quantity price book { id } } } }
}`;

describe('the order subgraph', () => {
  it('resolves Order references through one batched read, with references to Payment, User and Book', async () => {
    const buyer = await registeredUser(suite.stack);
    const [first, second] = [await orderFor(buyer.userId, buyer.bearer), await orderFor(buyer.userId, buyer.bearer)];
    const batch = jest.spyOn(orders(), 'ordersFor');
    try {
      const res = await gql(ORDER_ENTITIES, suite.admin.bearer, {
        r: [
          { __typename: 'Order', orderId: second.orderId },
          { __typename: 'Order', orderId: first.orderId },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data._entities.map((o: { orderId: string }) => o.orderId)).toEqual([second.orderId, first.orderId]);
      expect(res.body.data._entities[1]).toEqual({
        orderId: first.orderId,
        status: 'CONFIRMED',
        totalAmount: '60.07',
        payment: { paymentId: first.paymentId },
        user: { userId: buyer.userId },
        items: [
          { bookId: first.bookId, quantity: 3, price: '19.99', book: { id: first.bookId } },
          { bookId: expect.any(String), quantity: 1, price: '0.10', book: { id: expect.any(String) } },
        ],
      });
      expect(batch).toHaveBeenCalledTimes(1);
      expect(batch.mock.calls[0][1]).toEqual([second.orderId, first.orderId]);
    } finally {
      batch.mockRestore();
    }
  });

  it("tells a USER that someone else's order does not exist, as REST does", async () => {
    const [owner, other] = [await registeredUser(suite.stack), await registeredUser(suite.stack)];
    const order = await orderFor(owner.userId, owner.bearer);
    const rest = await request(suite.stack.urls.order).get(`/api/orders/${order.orderId}`).set('Authorization', other.bearer);
    expect(rest.status).toBe(404);

    const byQuery = await gql('query ($id: ID!) { order(orderId: $id) { orderId } }', other.bearer, { id: order.orderId });
    expect(byQuery.body).toEqual({
      data: { order: null },
      errors: [expect.objectContaining({ message: rest.body.message, extensions: { code: 'NOT_FOUND', reason: 'ORDER_NOT_FOUND' } })],
    });

    const byReference = await gql(ORDER_ENTITIES, other.bearer, { r: [{ __typename: 'Order', orderId: order.orderId }] });
    expect(byReference.body.data._entities).toEqual([null]);
    expect(errorCodes(byReference.body)).toEqual(['NOT_FOUND']);

    const mine = await gql('query ($id: ID!) { order(orderId: $id) { orderId } myOrders { orderId } }', owner.bearer, { id: order.orderId });
    expect(mine.body).toEqual({ data: { order: { orderId: order.orderId }, myOrders: [{ orderId: order.orderId }] } });
  });

  it('adds orders to User for the user themself or an ADMIN, batching every user into one read', async () => {
    const [a, b] = [await registeredUser(suite.stack), await registeredUser(suite.stack)];
    const [orderA, orderB] = [await orderFor(a.userId, a.bearer), await orderFor(b.userId, b.bearer)];
    const query = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on User { userId orders { orderId } } } }';
    const both = {
      r: [
        { __typename: 'User', userId: a.userId },
        { __typename: 'User', userId: b.userId },
      ],
    };

    const batch = jest.spyOn(orders(), 'ordersOfUsers');
    try {
      const asAdmin = await gql(query, suite.admin.bearer, both);
      expect(asAdmin.body).toEqual({
        data: {
          _entities: [
            { userId: a.userId, orders: [{ orderId: orderA.orderId }] },
            { userId: b.userId, orders: [{ orderId: orderB.orderId }] },
          ],
        },
      });
      expect(batch).toHaveBeenCalledTimes(1);
    } finally {
      batch.mockRestore();
    }

    const asA = await gql(query, a.bearer, both);
    expect(asA.body.data._entities).toEqual([{ userId: a.userId, orders: [{ orderId: orderA.orderId }] }, null]);
    expect(asA.body.errors).toEqual([expect.objectContaining({ path: ['_entities', 1, 'orders'], extensions: { code: 'FORBIDDEN', reason: 'FORBIDDEN' } })]);
  });

  it("keeps `orders` and `updateOrderStatus` to ADMINs, with REST's transition rules", async () => {
    const buyer = await registeredUser(suite.stack);
    const order = await orderFor(buyer.userId, buyer.bearer);
    expect(errorCodes((await gql('{ orders { orderId } }')).body)).toEqual(['UNAUTHENTICATED']);
    expect(errorCodes((await gql('{ orders { orderId } }', buyer.bearer)).body)).toEqual(['FORBIDDEN']);
    const badPage = await gql('{ orders(limit: 0) { orderId } }', suite.admin.bearer);
    expect(badPage.body.errors[0].extensions.validationErrors).toEqual(['limit: must be an integer from 1 to 200']);

    const move = 'mutation ($id: ID!, $s: OrderStatus!) { updateOrderStatus(orderId: $id, status: $s) { orderId status } }';
    expect(errorCodes((await gql(move, buyer.bearer, { id: order.orderId, s: 'PROCESSING' })).body)).toEqual(['FORBIDDEN']);
    const moved = await gql(move, suite.admin.bearer, { id: order.orderId, s: 'PROCESSING' });
    expect(moved.body).toEqual({ data: { updateOrderStatus: { orderId: order.orderId, status: 'PROCESSING' } } });
    const skipped = await gql(move, suite.admin.bearer, { id: order.orderId, s: 'DELIVERED' });
    expect(skipped.body.errors).toEqual([
      expect.objectContaining({ message: `Order ${order.orderId} cannot move from PROCESSING to DELIVERED`, extensions: { code: 'CONFLICT', reason: 'INVALID_ORDER_TRANSITION' } }),
    ]);

    const processing = await gql('{ orders(status: PROCESSING, limit: 200) { orderId status } }', suite.admin.bearer);
    expect(processing.body.data.orders).toContainEqual({ orderId: order.orderId, status: 'PROCESSING' });
    expect(processing.body.data.orders.every((o: { status: string }) => o.status === 'PROCESSING')).toBe(true);
  });

  it('answers with each order the statuses an admin may move it to next, from the transition table', async () => {
    const buyer = await registeredUser(suite.stack);
    const order = await orderFor(buyer.userId, buyer.bearer);
    const read = 'query ($id: ID!) { order(orderId: $id) { status allowedNextStatuses } }';
    expect((await gql(read, buyer.bearer, { id: order.orderId })).body).toEqual({ data: { order: { status: 'CONFIRMED', allowedNextStatuses: ['PROCESSING', 'CANCELLED'] } } });
    const move = 'mutation ($id: ID!, $s: OrderStatus!) { updateOrderStatus(orderId: $id, status: $s) { status allowedNextStatuses } }';
    const steps = [
      ['PROCESSING', ['SHIPPED', 'CANCELLED']],
      ['SHIPPED', ['DELIVERED']],
      ['DELIVERED', []],
    ] as const;
    for (const [status, next] of steps) {
      expect((await gql(move, suite.admin.bearer, { id: order.orderId, s: status })).body).toEqual({ data: { updateOrderStatus: { status, allowedNextStatuses: next } } });
    }
    const cancelled = await orderFor(buyer.userId, buyer.bearer);
    const cancel = await gql('mutation ($id: ID!) { cancelOrder(orderId: $id) { status allowedNextStatuses } }', buyer.bearer, { id: cancelled.orderId });
    expect(cancel.body).toEqual({ data: { cancelOrder: { status: 'CANCELLED', allowedNextStatuses: [] } } });
  });

  it('cancels through `cancelOrder` with the rules of POST /api/orders/{id}/cancel', async () => {
    const [owner, other] = [await registeredUser(suite.stack), await registeredUser(suite.stack)];
    const order = await orderFor(owner.userId, owner.bearer);
    const cancel = 'mutation ($id: ID!) { cancelOrder(orderId: $id) { orderId status } }';
    expect(errorCodes((await gql(cancel, undefined, { id: order.orderId })).body)).toEqual(['UNAUTHENTICATED']);
    const hidden = await gql(cancel, other.bearer, { id: order.orderId });
    expect(hidden.body.errors).toEqual([expect.objectContaining({ message: `Order not found: ${order.orderId}`, extensions: { code: 'NOT_FOUND', reason: 'ORDER_NOT_FOUND' } })]);

    const cancelled = await gql(cancel, owner.bearer, { id: order.orderId });
    expect(cancelled.body).toEqual({ data: { cancelOrder: { orderId: order.orderId, status: 'CANCELLED' } } });
    const again = await gql(cancel, suite.admin.bearer, { id: order.orderId });
    expect(again.body.errors).toEqual([
      expect.objectContaining({ message: 'Order cannot be cancelled in status: CANCELLED', extensions: { code: 'CONFLICT', reason: 'ORDER_NOT_CANCELLABLE' } }),
    ]);
    const rest = await request(suite.stack.urls.order).get(`/api/orders/${order.orderId}`).set('Authorization', owner.bearer);
    expect(rest.body.status).toBe('CANCELLED');
  });

  it('takes a tracking number to SHIPPED with the rules of PUT /api/orders/{id}/status, into the shipment e-mail', async () => {
    const buyer = await registeredUser(suite.stack);
    const order = await orderFor(buyer.userId, buyer.bearer);
    const move = 'mutation ($id: ID!, $s: OrderStatus!, $t: String) { updateOrderStatus(orderId: $id, status: $s, trackingNumber: $t) { status } }';
    const refused = async (variables: Record<string, unknown>) => (await gql(move, suite.admin.bearer, { id: order.orderId, ...variables })).body.errors;

    expect(await refused({ s: 'PROCESSING', t: '1Z999' })).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', validationErrors: ['trackingNumber: only with status SHIPPED'] }) }),
    ]);
    expect((await gql(move, suite.admin.bearer, { id: order.orderId, s: 'PROCESSING', t: null })).body).toEqual({ data: { updateOrderStatus: { status: 'PROCESSING' } } });
    expect(await refused({ s: 'SHIPPED', t: '<script>' })).toEqual([
      expect.objectContaining({
        extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', validationErrors: ['trackingNumber: must be 1 to 64 letters, digits, spaces or dashes'] }),
      }),
    ]);
    const shipped = await gql(move, suite.admin.bearer, { id: order.orderId, s: 'SHIPPED', t: ' 1Z999AA10123456784 ' });
    expect(shipped.body).toEqual({ data: { updateOrderStatus: { status: 'SHIPPED' } } });
    const mail = await suite.stack.services.order!.db.manager.findOneByOrFail(OutgoingMail, { mailKey: `${order.orderId}:order-shipped` });
    expect(JSON.parse(mail.data ?? 'null')).toMatchObject({ trackingNumber: '1Z999AA10123456784' });
  });
});
