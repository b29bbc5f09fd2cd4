import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { ProcessedEvent, consumerGroupOf } from '../../platform/events/consumer';
import { TOPICS } from '../../platform/events/topics';
import { checkout, createBook } from '../../test/commerce';
import { orderCancelledEvent, orderCreatedEvent, paymentRefundSucceededEvent } from '../../test/event-fixtures';
import { adminSession, expectEnvelope, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';
import { OrderStock } from './entities';

let stack: Stack;
let adminBearer: string;
beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment'] });
  adminBearer = (await adminSession(stack)).bearer;
});
afterAll(async () => {
  await stack?.stop();
});

const bookDb = () => stack.services.book!.db;
const stockOf = async (bookId: string) => (await request(stack.urls.book).get(`/api/books/${bookId}`)).body.stock as number | null;

/** Checks out, pays through the simulator, and resolves with the order once it exists. */
async function buy(bearer: string, items: { bookId: string; quantity: number }[]) {
  const res = await checkout(stack, bearer, items);
  expect(res.status).toBe(200);
  return payAndWaitForOrder(bearer, res.body);
}

async function payAndWaitForOrder(bearer: string, payment: { paymentId: string; paymentIntentId: string }) {
  await stack.stripe!.confirm(payment.paymentIntentId);
  return waitFor(
    async () => {
      const res = await request(stack.urls.order).get(`/api/orders/payment/${payment.paymentId}`).set('Authorization', bearer);
      return res.status === 200
        ? (res.body as { orderId: string; paymentId: string; userId: string; items: { bookId: string; bookTitle: string; quantity: number; price: number }[] })
        : undefined;
    },
    { what: `the order of payment ${payment.paymentId}` },
  );
}

/** Resolves once the book service has recorded `eventId` as applied. */
const applied = (eventId: string) =>
  waitFor(() => bookDb().manager.findOne(ProcessedEvent, { where: { consumer: consumerGroupOf('book'), eventId } }), { what: `event ${eventId} applied by the book service` });

async function publish(topic: string, key: string, event: object) {
  await stack.bus.publish([{ topic, key, value: JSON.stringify(event) }]);
}

async function oversoldCopies(): Promise<number> {
  const text = (await request(stack.urls.book).get('/actuator/prometheus')).text;
  const line = text.split('\n').find((l) => l.startsWith('bookstore_stock_oversold_copies_total'));
  return Number(line?.split(' ').pop() ?? NaN);
}

describe('stock', () => {
  it('lets a client that knows nothing of stock create a book and sell any quantity of it', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, adminBearer, 'Untracked', 4.5);
    expect(await stockOf(book.id)).toBeNull();
    const order = await buy(buyer.bearer, [{ bookId: book.id, quantity: 2000 }]);
    expect(order.items).toEqual([expect.objectContaining({ bookId: book.id, quantity: 2000 })]);
    expect(await stockOf(book.id)).toBeNull();
  });

  it('refuses a checkout beyond a tracked stock (409 naming the title and what is left)', async () => {
    const buyer = await registeredUser(stack);
    const scarce = await createBook(stack, adminBearer, `Scarce ${randomUUID().slice(0, 6)}`, 10, 12);
    const plenty = await createBook(stack, adminBearer, 'Plenty', 10);
    const res = await checkout(stack, buyer.bearer, [
      { bookId: plenty.id, quantity: 500 },
      { bookId: scarce.id, quantity: 13 },
    ]);
    expectEnvelope(res, 409, `Not enough stock for ${scarce.title}: 12 left`);
    expect(await stockOf(scarce.id)).toBe(12);
  });

  it('takes the quantities of a paid order off the stock, once, however often order-created arrives', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, adminBearer, 'Tracked', 10, 12);
    const order = await buy(buyer.bearer, [{ bookId: book.id, quantity: 5 }]);
    await waitFor(async () => (await stockOf(book.id)) === 7, { what: 'stock 12 - 5' });

    // The same order told again under a new eventId (a producer retry) takes nothing more.
    const again = orderCreatedEvent({ orderId: order.orderId, paymentId: order.paymentId, userId: order.userId, totalAmount: 50, items: order.items });
    await publish(TOPICS.orderCreated, order.orderId, again);
    await applied(again.eventId);
    expect(await stockOf(book.id)).toBe(7);
    expectEnvelope(await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 8 }]), 409, 'Not enough stock for Tracked: 7 left');
  });

  it('puts the stock back once on order-cancelled, even redelivered and told twice', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, adminBearer, 'Returned', 10, 10);
    const order = await buy(buyer.bearer, [{ bookId: book.id, quantity: 4 }]);
    await waitFor(async () => (await stockOf(book.id)) === 6, { what: 'stock 10 - 4' });

    const cancelled = orderCancelledEvent({ orderId: order.orderId, paymentId: order.paymentId, userId: order.userId, items: order.items });
    await publish(TOPICS.orderCancelled, order.orderId, cancelled);
    await applied(cancelled.eventId);
    expect(await stockOf(book.id)).toBe(10);

    // Redelivered as is, then told again under a new eventId: same key, same partition, so once the
    // last is applied the first was handled too.
    await publish(TOPICS.orderCancelled, order.orderId, cancelled);
    const toldAgain = { ...cancelled, eventId: randomUUID() };
    await publish(TOPICS.orderCancelled, order.orderId, toldAgain);
    await applied(toldAgain.eventId);
    expect(await stockOf(book.id)).toBe(10);
    expect(await bookDb().manager.find(OrderStock, { where: { orderId: order.orderId } })).toEqual([{ orderId: order.orderId, bookId: book.id, taken: 4, returned: true }]);
  });

  it('takes nothing for an order whose cancellation arrived first', async () => {
    const book = await createBook(stack, adminBearer, 'Out of order', 10, 3);
    const base = { occurredAt: new Date().toISOString(), orderId: randomUUID(), paymentId: randomUUID(), userId: randomUUID() };
    const items = [{ bookId: book.id, bookTitle: 'Out of order', quantity: 2, price: 10 }];
    const cancelled = orderCancelledEvent({ ...base, items });
    await publish(TOPICS.orderCancelled, base.orderId, cancelled);
    await applied(cancelled.eventId);
    const created = orderCreatedEvent({ ...base, totalAmount: 20, items });
    await publish(TOPICS.orderCreated, base.orderId, created);
    await applied(created.eventId);
    expect(await stockOf(book.id)).toBe(3);
  });

  it('lets at most one of two racing checkouts take the last copy; stock never goes below zero', async () => {
    const [first, second] = [await registeredUser(stack), await registeredUser(stack)];
    const book = await createBook(stack, adminBearer, 'Last copy', 10, 1);
    const before = await oversoldCopies();
    const answers = await Promise.all([first, second].map((buyer) => checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 1 }])));
    // Both may pass the check (neither order exists yet); a refusal is the contract's 409.
    for (const res of answers) if (res.status !== 200) expectEnvelope(res, 409, 'Not enough stock for Last copy: 0 left');
    const paid = answers.map((res, i) => ({ res, buyer: [first, second][i] })).filter(({ res }) => res.status === 200);
    const orders = await Promise.all(paid.map(({ res, buyer }) => payAndWaitForOrder(buyer.bearer, res.body)));

    const lines = await waitFor(
      async () => {
        const rows = await bookDb().manager.find(OrderStock, { where: { bookId: book.id } });
        return rows.length === orders.length ? rows : undefined;
      },
      { what: 'every order applied to the stock' },
    );
    expect(lines.reduce((sum, line) => sum + line.taken, 0)).toBe(1);
    expect(await stockOf(book.id)).toBe(0);
    expect((await oversoldCopies()) - before).toBe(orders.length - 1);
    expectEnvelope(await checkout(stack, first.bearer, [{ bookId: book.id, quantity: 1 }]), 409, 'Not enough stock for Last copy: 0 left');
  });

  it('puts refunded lines back once when the refund asks to restock, and only what the order still holds', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, adminBearer, 'Refunded copies', 10, 10);
    const order = await buy(buyer.bearer, [{ bookId: book.id, quantity: 4 }]);
    await waitFor(async () => (await stockOf(book.id)) === 6, { what: 'stock 10 - 4' });
    const payment = { paymentId: order.paymentId, userId: order.userId, orderId: order.orderId, paymentAmount: 40 };
    const items = [{ bookId: book.id, bookTitle: book.title, quantity: 1, price: 10 }];

    const restocked = paymentRefundSucceededEvent({ ...payment, items, restock: true });
    await publish(TOPICS.paymentRefundSucceeded, order.paymentId, restocked);
    await applied(restocked.eventId);
    expect(await stockOf(book.id)).toBe(7);
    await publish(TOPICS.paymentRefundSucceeded, order.paymentId, restocked);
    const kept = paymentRefundSucceededEvent({ ...payment, items, restock: false, refundedAmount: 20 });
    await publish(TOPICS.paymentRefundSucceeded, order.paymentId, kept);
    await applied(kept.eventId);
    expect(await stockOf(book.id)).toBe(7);

    // The cancel puts back the three copies the order still holds, not the one already returned.
    const cancelled = orderCancelledEvent({ orderId: order.orderId, paymentId: order.paymentId, userId: order.userId, items: order.items });
    await publish(TOPICS.orderCancelled, order.orderId, cancelled);
    await applied(cancelled.eventId);
    expect(await stockOf(book.id)).toBe(10);
    const late = paymentRefundSucceededEvent({ ...payment, items, restock: true, refundedAmount: 30 });
    await publish(TOPICS.paymentRefundSucceeded, order.paymentId, late);
    await applied(late.eventId);
    expect(await stockOf(book.id)).toBe(10);
  });

  it('skips a refunded line whose book was deleted since, and restocks the others', async () => {
    const [kept, deleted] = [await createBook(stack, adminBearer, 'Kept', 10, 5), await createBook(stack, adminBearer, 'Deleted since', 10, 5)];
    expect((await request(stack.urls.book).delete(`/api/books/${deleted.id}`).set('Authorization', adminBearer)).status).toBe(200);
    const refund = paymentRefundSucceededEvent({
      paymentId: randomUUID(),
      userId: randomUUID(),
      paymentAmount: 50,
      restock: true,
      items: [
        { bookId: deleted.id, bookTitle: 'Deleted since', quantity: 1, price: 10 },
        { bookId: kept.id, bookTitle: 'Kept', quantity: 2, price: 10 },
      ],
    });
    await publish(TOPICS.paymentRefundSucceeded, refund.paymentId, refund);
    await applied(refund.eventId);
    expect(await stockOf(kept.id)).toBe(7);
  });
});
