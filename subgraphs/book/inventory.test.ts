/**
 * Stock moves once per copy (CONTRACT §4): a checkout holds, the paid order takes, a cancel puts
 * back, a refund with restock puts its lines back; in whatever order the events arrive, however
 * often, and with a refund and a cancel of one order racing each other.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { QueryRunner } from 'typeorm';
import { ProcessedEvent, consumerGroupOf } from '../../platform/events/consumer';
import { TOPICS } from '../../platform/events/topics';
import { STOCK_ROUTES } from '../../platform/contracts/stock';
import { checkout, createBook } from '../../test/commerce';
import { orderCancelledEvent, orderCreatedEvent, paymentRefundSucceededEvent } from '../../test/event-fixtures';
import { INTERNAL_KEY, adminSession, expectEnvelope, registeredUser, runConfig, startStack, waitFor, type Stack } from '../../test/harness';
import { StockHold } from './entities';

let stack: Stack;
let adminBearer: string;
beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment'], env: { STOCK_HOLD_MAX_PER_BOOK: '5', STOCK_HOLD_MAX_COPIES: '8' } });
  adminBearer = (await adminSession(stack)).bearer;
});
afterAll(async () => {
  await stack?.stop();
});

const bookDb = () => stack.services.book!.db;
const bookOf = async (bookId: string) =>
  (await request(stack.urls.book).get(`/api/books/${bookId}`)).body as { stock: number | null; heldStock: number | null; availableStock: number | null };
const stockOf = async (bookId: string) => (await bookOf(bookId)).stock;

type Order = { orderId: string; paymentId: string; userId: string; status: string; items: { bookId: string; bookTitle: string; quantity: number; price: number }[] };

/** Checks out, pays through the simulator, and resolves with the order once it exists. */
async function buy(bearer: string, items: { bookId: string; quantity: number }[]): Promise<Order> {
  const res = await checkout(stack, bearer, items);
  expect(res.status).toBe(200);
  await stack.stripe!.confirm(res.body.paymentIntentId);
  return waitFor(
    async () => {
      const order = await request(stack.urls.order).get(`/api/orders/payment/${res.body.paymentId}`).set('Authorization', bearer);
      return order.status === 200 ? (order.body as Order) : undefined;
    },
    { what: `the order of payment ${res.body.paymentId}` },
  );
}

/** Resolves once the book service has recorded `eventId` as applied. */
const applied = (eventId: string) =>
  waitFor(() => bookDb().manager.findOne(ProcessedEvent, { where: { consumer: consumerGroupOf('book'), eventId } }), { what: `event ${eventId} applied by the book service` });

async function publish(topic: string, key: string, event: object) {
  await stack.bus.publish([{ topic, key, value: JSON.stringify(event) }]);
}

/**
 * `meanwhile` runs while another connection's transaction has done `begun` and not yet ended (rolled
 * back after); at READ COMMITTED, as the book service places, takes and releases holds, so it locks
 * the rows it names and no gaps between them.
 */
async function inFlight(begun: (runner: QueryRunner) => Promise<unknown>, meanwhile: () => Promise<unknown>): Promise<void> {
  const runner = bookDb().dataSource.createQueryRunner();
  await runner.connect();
  await runner.startTransaction('READ COMMITTED');
  try {
    await begun(runner);
    await meanwhile();
  } finally {
    await runner.rollbackTransaction();
    await runner.release();
  }
}

const internal = (path: string, body: object) => request(stack.urls.book).post(path).set('X-Internal-Api-Key', INTERNAL_KEY).send(body);

describe('stock', () => {
  it('lets a client that knows nothing of stock create a book and sell any quantity of it, holding nothing', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, adminBearer, 'Untracked', 4.5);
    expect(await bookOf(book.id)).toMatchObject({ stock: null, heldStock: null, availableStock: null });
    const res = await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 2000 }]);
    expect(res.status).toBe(200);
    expect(res.body.holdExpiresAt).toBeNull();
    await stack.stripe!.confirm(res.body.paymentIntentId);
    await waitFor(async () => (await request(stack.urls.order).get(`/api/orders/payment/${res.body.paymentId}`).set('Authorization', buyer.bearer)).status === 200, {
      what: 'the order',
    });
    expect(await stockOf(book.id)).toBeNull();
  });

  it('refuses a checkout beyond the copies available (409 naming the title and what is left)', async () => {
    const buyer = await registeredUser(stack);
    const scarce = await createBook(stack, adminBearer, `Scarce ${randomUUID().slice(0, 6)}`, 10, 8);
    const plenty = await createBook(stack, adminBearer, 'Plenty', 10);
    expect((await checkout(stack, buyer.bearer, [{ bookId: scarce.id, quantity: 4 }])).status).toBe(200);
    const res = await checkout(stack, (await registeredUser(stack)).bearer, [
      { bookId: plenty.id, quantity: 500 },
      { bookId: scarce.id, quantity: 5 },
    ]);
    expectEnvelope(res, 409, `Not enough stock for ${scarce.title}: 4 left`);
    expect(await bookOf(scarce.id)).toMatchObject({ stock: 8, heldStock: 4, availableStock: 4 });
  });

  it('holds a checkout’s copies from everyone else until it is paid, then takes them', async () => {
    const [first, second] = [await registeredUser(stack), await registeredUser(stack)];
    const book = await createBook(stack, adminBearer, `Held ${randomUUID().slice(0, 6)}`, 10, 5);
    const held = await checkout(stack, first.bearer, [{ bookId: book.id, quantity: 3 }]);
    expect(held.status).toBe(200);
    expect(Date.parse(`${held.body.holdExpiresAt}Z`) - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(await bookOf(book.id)).toMatchObject({ stock: 5, heldStock: 3, availableStock: 2 });
    expectEnvelope(await checkout(stack, second.bearer, [{ bookId: book.id, quantity: 3 }]), 409, `Not enough stock for ${book.title}: 2 left`);

    await stack.stripe!.confirm(held.body.paymentIntentId);
    await waitFor(async () => (await stockOf(book.id)) === 2, { what: 'stock 5 - 3' });
    expect(await bookOf(book.id)).toMatchObject({ stock: 2, heldStock: 0, availableStock: 2 });
  });

  it('takes a paid order’s copies once, however often the take is asked and order-created arrives', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, adminBearer, 'Tracked', 10, 12);
    const order = await buy(buyer.bearer, [{ bookId: book.id, quantity: 5 }]);
    await waitFor(async () => (await stockOf(book.id)) === 7, { what: 'stock 12 - 5' });

    const again = await internal(STOCK_ROUTES.commit, { paymentId: order.paymentId, userId: order.userId, items: [{ bookId: book.id, quantity: 5 }] });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ filled: true, shortages: [] });
    const created = orderCreatedEvent({ orderId: order.orderId, paymentId: order.paymentId, userId: order.userId, totalAmount: 50, items: order.items });
    await publish(TOPICS.orderCreated, order.orderId, created);
    await applied(created.eventId);
    expect(await stockOf(book.id)).toBe(7);
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
    expect(await bookDb().manager.find(StockHold, { where: { paymentId: order.paymentId } })).toEqual([
      expect.objectContaining({ bookId: book.id, status: 'TAKEN', taken: 4, returned: true }),
    ]);
  });

  it('takes nothing for an order it never took copies for whose cancellation arrived first', async () => {
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

  it('sells 3 copies to 3 of 20 customers checking out at once: the others are refused at checkout, none pays for a copy that is not there', async () => {
    const book = await createBook(stack, adminBearer, `Signed first edition ${randomUUID().slice(0, 6)}`, 80, 3);
    const buyers = await Promise.all(Array.from({ length: 20 }, () => registeredUser(stack)));
    const answers = await Promise.all(buyers.map((buyer) => checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 1 }])));
    const held = answers.filter((res) => res.status === 200);
    expect(held).toHaveLength(3);
    for (const res of answers.filter((answer) => answer.status !== 200)) expectEnvelope(res, 409, `Not enough stock for ${book.title}: 0 left`);
    expect(await bookOf(book.id)).toMatchObject({ stock: 3, heldStock: 3, availableStock: 0 });

    await Promise.all(held.map((res) => stack.stripe!.confirm(res.body.paymentIntentId)));
    const orders = await Promise.all(
      held.map((res) =>
        waitFor(
          async () => {
            const order = await request(stack.urls.order).get(`/api/orders/payment/${res.body.paymentId}`).set('Authorization', buyers[answers.indexOf(res)].bearer);
            return order.status === 200 ? (order.body as Order) : undefined;
          },
          { what: 'an order of the rush' },
        ),
      ),
    );
    expect(orders.map((order) => order.status)).toEqual(['CONFIRMED', 'CONFIRMED', 'CONFIRMED']);
    await waitFor(async () => (await stockOf(book.id)) === 0, { what: 'the three copies taken' });
    expect(await bookOf(book.id)).toMatchObject({ stock: 0, heldStock: 0, availableStock: 0 });
  });

  it('keeps the hold as it is for the same checkout asked again: same payment, same intent, nothing held twice', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, adminBearer, `Asked again ${randomUUID().slice(0, 6)}`, 10, 4);
    const checkoutId = randomUUID();
    const first = await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 2 }], checkoutId);
    expect(first.status).toBe(200);
    const again = await Promise.all([1, 2, 3].map(() => checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 2 }], checkoutId)));
    for (const res of again) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ paymentId: first.body.paymentId, paymentIntentId: first.body.paymentIntentId, holdExpiresAt: first.body.holdExpiresAt });
    }
    expect(await bookOf(book.id)).toMatchObject({ heldStock: 2, availableStock: 2 });
  });

  it('gives a checkout’s copies back at once when its payment fails', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, adminBearer, `Declined ${randomUUID().slice(0, 6)}`, 10, 2);
    const res = await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 2 }]);
    expect((await bookOf(book.id)).availableStock).toBe(0);
    await stack.stripe!.fail(res.body.paymentIntentId, 'card_declined');
    await waitFor(async () => (await bookOf(book.id)).availableStock === 2, { what: 'the copies back' });
    expect((await request(stack.urls.payment).get(`/api/payments/${res.body.paymentId}`).set('Authorization', buyer.bearer)).body).toMatchObject({
      status: 'FAILED',
      failureReason: 'card_declined',
    });
  });

  it('lets one account looping over checkouts of a title hold no more than its last one, and at most the cap per title', async () => {
    const [hoarder, shopper] = [await registeredUser(stack), await registeredUser(stack)];
    const book = await createBook(stack, adminBearer, `Hoarded ${randomUUID().slice(0, 6)}`, 10, 10);
    expectEnvelope(await checkout(stack, hoarder.bearer, [{ bookId: book.id, quantity: 6 }]), 409, `You can hold at most 5 copies of ${book.title} at once`);
    const loop = [];
    for (let i = 0; i < 12; i += 1) loop.push(await checkout(stack, hoarder.bearer, [{ bookId: book.id, quantity: 5 }]));
    expect(loop.map((res) => res.status)).toEqual(Array(12).fill(200));
    expect(await bookOf(book.id)).toMatchObject({ heldStock: 5, availableStock: 5 });
    expect((await checkout(stack, shopper.bearer, [{ bookId: book.id, quantity: 5 }])).status).toBe(200);
    // Each replaced checkout is ended: its intent cancelled, so it can no longer be paid.
    for (const res of loop.slice(0, -1)) {
      await waitFor(
        async () => {
          const payment = await request(stack.urls.payment).get(`/api/payments/${res.body.paymentId}`).set('Authorization', hoarder.bearer);
          return payment.body.status === 'FAILED' && payment.body.failureReason === 'checkout_expired';
        },
        { what: 'a replaced checkout ended' },
      );
      expect(stack.stripe!.intents().find((intent) => intent.id === res.body.paymentIntentId)?.status).toBe('canceled');
    }
  });

  it('refuses a customer holding more than the cap of copies across titles (409)', async () => {
    const hoarder = await registeredUser(stack);
    const titles = await Promise.all([1, 2, 3].map((n) => createBook(stack, adminBearer, `Capped ${n} ${randomUUID().slice(0, 6)}`, 10, 10)));
    expect((await checkout(stack, hoarder.bearer, [{ bookId: titles[0].id, quantity: 4 }])).status).toBe(200);
    expect((await checkout(stack, hoarder.bearer, [{ bookId: titles[1].id, quantity: 4 }])).status).toBe(200);
    expectEnvelope(
      await checkout(stack, hoarder.bearer, [{ bookId: titles[2].id, quantity: 1 }]),
      409,
      'You can hold at most 8 copies at once: pay for or give up another checkout first (8 held)',
    );
  });

  it('gives the last copy to exactly one of two racing checkouts: the other is refused at checkout', async () => {
    const [first, second] = [await registeredUser(stack), await registeredUser(stack)];
    const book = await createBook(stack, adminBearer, 'Last copy', 10, 1);
    const answers = await Promise.all([first, second].map((buyer) => checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 1 }])));
    expect(answers.map((res) => res.status).sort()).toEqual([200, 409]);
    expectEnvelope(
      answers.find((res) => res.status === 409)!,
      409,
      'Not enough stock for Last copy: 0 left',
    );
    const winner = answers.find((res) => res.status === 200)!;
    await stack.stripe!.confirm(winner.body.paymentIntentId);
    await waitFor(async () => (await stockOf(book.id)) === 0, { what: 'the last copy taken' });
    expect(await bookOf(book.id)).toMatchObject({ stock: 0, heldStock: 0, availableStock: 0 });
  });

  it('refuses a checkout of a title whose copies are all held at once, without waiting for the book while holds are being placed', async () => {
    const book = await createBook(stack, adminBearer, `Held out ${randomUUID().slice(0, 6)}`, 10, 2);
    expect((await checkout(stack, (await registeredUser(stack)).bearer, [{ bookId: book.id, quantity: 2 }])).status).toBe(200);
    const late = await registeredUser(stack);
    const hold = { paymentId: randomUUID(), holdId: randomUUID(), userId: late.userId, items: [{ bookId: book.id, quantity: 1 }] };
    if (!runConfig.dbUrl) {
      expectEnvelope(await internal(STOCK_ROUTES.hold, hold), 409, `Not enough stock for ${book.title}: 0 left`);
      return;
    }
    // Another checkout of the book in the middle of placing its hold: it has the book's row locked.
    await inFlight(
      (placing) => placing.query('SELECT id FROM books WHERE id = ? FOR UPDATE', [book.id]),
      async () => expectEnvelope(await internal(STOCK_ROUTES.hold, hold), 409, `Not enough stock for ${book.title}: 0 left`),
    );
  });

  it('places a hold without waiting on other checkouts’ lines: a release in progress on the title, a hold being placed on another', async () => {
    const [title, other] = [
      await createBook(stack, adminBearer, `Side by side ${randomUUID().slice(0, 6)}`, 10, 3),
      await createBook(stack, adminBearer, `Next shelf ${randomUUID().slice(0, 6)}`, 10, 3),
    ];
    const releasing = { paymentId: randomUUID(), holdId: randomUUID(), userId: (await registeredUser(stack)).userId, items: [{ bookId: title.id, quantity: 1 }] };
    expect((await internal(STOCK_ROUTES.hold, releasing)).status).toBe(200);
    const hold = { paymentId: randomUUID(), holdId: randomUUID(), userId: (await registeredUser(stack)).userId, items: [{ bookId: title.id, quantity: 2 }] };
    if (!runConfig.dbUrl) {
      expect((await internal(STOCK_ROUTES.hold, hold)).status).toBe(200);
      return;
    }
    // In flight on another connection: the release of the first hold (payment-failed), and a hold
    // on the other book with its row locked and its line written, neither committed yet.
    await inFlight(
      async (running) => {
        await running.query("UPDATE stock_holds SET status = 'RELEASED' WHERE payment_id = ?", [releasing.paymentId]);
        await running.query('SELECT id FROM books WHERE id = ? FOR UPDATE', [other.id]);
        await running.query(
          "INSERT INTO stock_holds (payment_id, book_id, hold_id, user_id, status, quantity, expires_at, taken, credited, returned, created_at, updated_at) VALUES (?, ?, ?, ?, 'HELD', 1, ?, 0, 0, 0, ?, ?)",
          [randomUUID(), other.id, randomUUID(), randomUUID(), new Date(Date.now() + 600_000), new Date(), new Date()],
        );
      },
      async () => {
        // The release is not committed: its copy still counts, and the two left are held at once.
        const res = await internal(STOCK_ROUTES.hold, hold);
        expect(res.status).toBe(200);
        expect(res.body.expiresAt).toEqual(expect.any(String));
      },
    );
    expect(await bookOf(title.id)).toMatchObject({ stock: 3, heldStock: 3, availableStock: 0 });
    expect(await bookOf(other.id)).toMatchObject({ stock: 3, heldStock: 0, availableStock: 3 });
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

  it('records a restocking refund that comes before the order took anything against the payment, so the take and a cancel net it', async () => {
    // The order's take lags (order-created is late, or the refund was published before the payment
    // service learnt its order, with no orderId): refund, then order-created, then order-cancelled.
    const book = await createBook(stack, adminBearer, 'Refunded early', 10, 10);
    const base = { orderId: randomUUID(), paymentId: randomUUID(), userId: randomUUID() };
    const items = [{ bookId: book.id, bookTitle: book.title, quantity: 2, price: 10 }];
    const refund = paymentRefundSucceededEvent({ paymentId: base.paymentId, userId: base.userId, paymentAmount: 20, restock: true, items: [{ ...items[0], quantity: 1 }] });
    expect(refund.orderId).toBeNull();
    await publish(TOPICS.paymentRefundSucceeded, base.paymentId, refund);
    await applied(refund.eventId);
    expect(await stockOf(book.id)).toBe(10);

    const created = orderCreatedEvent({ ...base, totalAmount: 20, items });
    await publish(TOPICS.orderCreated, base.orderId, created);
    await applied(created.eventId);
    expect(await stockOf(book.id)).toBe(9);
    const cancelled = orderCancelledEvent({ ...base, items });
    await publish(TOPICS.orderCancelled, base.orderId, cancelled);
    await applied(cancelled.eventId);
    expect(await stockOf(book.id)).toBe(10);
  });

  it('ends every order that a restocking refund and a cancel race over at its first stock, on every database', async () => {
    const pairs = runConfig.dbUrl ? 12 : 4;
    const book = await createBook(stack, adminBearer, `Raced ${randomUUID().slice(0, 6)}`, 10, 100);
    const buyer = await registeredUser(stack);
    const orders: Order[] = [];
    for (let i = 0; i < pairs; i += 1) orders.push(await buy(buyer.bearer, [{ bookId: book.id, quantity: 3 }]));
    await waitFor(async () => (await stockOf(book.id)) === 100 - 3 * pairs, { what: 'every order taken' });

    // Two topics, two consumers: each order's refund of one copy and its cancel apply at once.
    const events = orders.flatMap((order) => {
      const refund = paymentRefundSucceededEvent({
        paymentId: order.paymentId,
        userId: order.userId,
        orderId: order.orderId,
        paymentAmount: 30,
        restock: true,
        items: [{ bookId: book.id, bookTitle: book.title, quantity: 1, price: 10 }],
      });
      const cancel = orderCancelledEvent({ orderId: order.orderId, paymentId: order.paymentId, userId: order.userId, items: order.items });
      return [
        { topic: TOPICS.paymentRefundSucceeded, key: order.paymentId, event: refund },
        { topic: TOPICS.orderCancelled, key: order.orderId, event: cancel },
      ];
    });
    await Promise.all(events.map(({ topic, key, event }) => publish(topic, key, event)));
    for (const { event } of events) await applied(event.eventId);
    expect(await stockOf(book.id)).toBe(100);
  });

  it('skips a refunded line whose book was deleted since, and restocks the others', async () => {
    const buyer = await registeredUser(stack);
    const [kept, deleted] = [await createBook(stack, adminBearer, 'Kept', 10, 5), await createBook(stack, adminBearer, 'Deleted since', 10, 5)];
    const order = await buy(buyer.bearer, [
      { bookId: kept.id, quantity: 2 },
      { bookId: deleted.id, quantity: 1 },
    ]);
    await waitFor(async () => (await stockOf(kept.id)) === 3, { what: 'stock 5 - 2' });
    expect((await request(stack.urls.book).delete(`/api/books/${deleted.id}`).set('Authorization', adminBearer)).status).toBe(200);
    const refund = paymentRefundSucceededEvent({
      paymentId: order.paymentId,
      userId: order.userId,
      orderId: order.orderId,
      paymentAmount: 30,
      restock: true,
      items: [
        { bookId: deleted.id, bookTitle: 'Deleted since', quantity: 1, price: 10 },
        { bookId: kept.id, bookTitle: 'Kept', quantity: 2, price: 10 },
      ],
    });
    await publish(TOPICS.paymentRefundSucceeded, refund.paymentId, refund);
    await applied(refund.eventId);
    expect(await stockOf(kept.id)).toBe(5);
  });

  it('refuses an admin lowering a tracked stock under the copies checkouts hold (409), and takes any value above', async () => {
    const buyer = await registeredUser(stack);
    const book = await createBook(stack, adminBearer, `Lowered ${randomUUID().slice(0, 6)}`, 10, 6);
    expect((await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 4 }])).status).toBe(200);
    const current = (await request(stack.urls.book).get(`/api/books/${book.id}`)).body as Record<string, unknown>;
    const update = (stock: number) =>
      request(stack.urls.book)
        .put(`/api/books/update/${book.id}`)
        .set('Authorization', adminBearer)
        .send({
          ...current,
          isbn: current.isbn,
          authorIds: current.authorIds,
          stock,
          id: undefined,
          createdAt: undefined,
          updatedAt: undefined,
          coverImageUrl: undefined,
          heldStock: undefined,
          availableStock: undefined,
        });
    expectEnvelope(await update(3), 409, 'Stock cannot be set below the 4 copies held by checkouts in progress');
    expect(await bookOf(book.id)).toMatchObject({ stock: 6, heldStock: 4, availableStock: 2 });
    const res = await update(4);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ stock: 4, heldStock: 4, availableStock: 0 });
  });

  it('keeps the stock routes internal: 401 without the internal key', async () => {
    const res = await request(stack.urls.book).post(STOCK_ROUTES.hold).send({ paymentId: randomUUID(), holdId: randomUUID(), userId: randomUUID(), items: [] });
    expectEnvelope(res, 401);
  });
});
