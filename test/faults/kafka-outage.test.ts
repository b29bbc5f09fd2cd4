/**
 * DESIGN's figure "Kafka stopped for 30 s under load: every event arrives after it returns; nothing
 * lost, nothing doubled", played on a broker of the test's own: it is stopped (keeping its data)
 * from the first of 500 purchases on, held down 30 s, and started again. The purchases complete
 * meanwhile (checkout, payment at Stripe, webhook); their events wait in the outboxes and, once the
 * broker is back, make 500 orders and 500 paid orders in analytics, each exactly once.
 */
import request from 'supertest';
import { Order } from '../../subgraphs/order/entities';
import { Payment } from '../../subgraphs/payment/entities';
import { checkout, createBook } from '../commerce';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from '../harness';
import { OwnBroker, describeFaults } from './infra';

jest.setTimeout(360_000);

const PURCHASES = 500;
const CLIENTS = 10;
const OUTAGE_MS = 30_000;
const PRICE = 10;

describeFaults('Kafka stopped for 30 s under load', () => {
  let broker: OwnBroker;
  let stack: Stack;

  beforeAll(async () => {
    broker = await OwnBroker.start();
    stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'], env: { KAFKA_BROKERS: broker.address } });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    await broker?.destroy();
  }, 120_000);

  it(`delivers every event of ${PURCHASES} purchases made while it was down: ${PURCHASES} orders, ${PURCHASES} paid, nothing doubled`, async () => {
    const admin = await adminSession(stack);
    const book = await createBook(stack, admin.bearer, 'Thirty Seconds of Silence', PRICE);
    // One after the other: concurrent logins on MariaDB can deadlock in the auth service (reported).
    const buyers: { bearer: string }[] = [];
    for (let i = 0; i < CLIENTS; i++) buyers.push(await registeredUser(stack));

    let started = 0;
    let completed = 0;
    /** A purchase as a shop makes it: checkout, the customer pays at Stripe, Stripe's webhook is accepted. */
    const purchase = async (bearer: string): Promise<string> => {
      const res = await checkout(stack, bearer, [{ bookId: book.id, quantity: 1 }]);
      if (res.status !== 200) throw new Error(`checkout answered ${res.status}: ${JSON.stringify(res.body)}`);
      const { event } = await stack.stripe!.confirm(res.body.paymentIntentId);
      if (event.status !== 'delivered') throw new Error(`webhook for ${res.body.paymentIntentId} ${event.status}: ${JSON.stringify(event.attempts)}`);
      completed += 1;
      return res.body.paymentId as string;
    };
    const client = async (bearer: string): Promise<string[]> => {
      const mine: string[] = [];
      while (started < PURCHASES) {
        started += 1;
        mine.push(await purchase(bearer));
      }
      return mine;
    };
    const purchases = Promise.all(buyers.map((buyer) => client(buyer.bearer)));

    await waitFor(() => completed >= CLIENTS, { what: 'the first purchases' });
    await broker.pause();
    const completedWhenDown = completed;
    // The outage itself: a fixed time is the scenario, not a wait for a condition.
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    const completedWhileDown = completed - completedWhenDown;
    await broker.resume();
    const paymentIds = (await purchases).flat();
    expect(paymentIds).toHaveLength(PURCHASES);
    expect(new Set(paymentIds).size).toBe(PURCHASES);
    // Purchases went on while the broker was down: the events waited in the outboxes.
    expect(completedWhileDown).toBeGreaterThan(0);

    const orderDb = stack.services.order!.db;
    const paymentDb = stack.services.payment!.db;
    const dashboard = async () => (await request(stack.urls.analytics).get('/analytics/dashboard').set('Authorization', admin.bearer)).body;
    await waitFor(
      async () => {
        const [orders, linked, board] = await Promise.all([
          orderDb.manager.count(Order),
          paymentDb.manager.createQueryBuilder(Payment, 'p').where('p.status = :status AND p.order_id IS NOT NULL', { status: 'SUCCESS' }).getCount(),
          dashboard(),
        ]);
        if (orders >= PURCHASES && linked >= PURCHASES && board.paidOrders >= PURCHASES && board.totalOrders >= PURCHASES) return true;
        // Says how far it got when the deadline passes.
        throw new Error(JSON.stringify({ orders, linked, paidOrders: board.paidOrders, totalOrders: board.totalOrders }));
      },
      { what: `${PURCHASES} orders, linked payments and analytics`, timeoutMs: 150_000, intervalMs: 500 },
    );

    // Every order through REST, as an admin sees them: one per payment, each payment's own.
    const orders: { orderId: string; paymentId: string; totalAmount: number }[] = [];
    for (let offset = 0; ; offset += 200) {
      const page = await request(stack.urls.order).get(`/api/orders?limit=200&offset=${offset}`).set('Authorization', admin.bearer);
      expect(page.status).toBe(200);
      orders.push(...page.body);
      if (page.body.length < 200) break;
    }
    expect(orders).toHaveLength(PURCHASES);
    const orderOf = new Map(orders.map((order) => [order.paymentId, order.orderId]));
    expect(orderOf.size).toBe(PURCHASES);
    expect([...orderOf.keys()].sort()).toEqual([...paymentIds].sort());
    expect(orders.every((order) => order.totalAmount === PRICE)).toBe(true);

    const payments = await paymentDb.manager.find(Payment);
    expect(payments).toHaveLength(PURCHASES);
    const mismatched = payments.filter((payment) => payment.status !== 'SUCCESS' || payment.orderId !== orderOf.get(payment.id));
    expect(mismatched).toEqual([]);

    expect(await dashboard()).toEqual({
      totalOrders: PURCHASES,
      paidOrders: PURCHASES,
      failedPayments: 0,
      totalRevenue: PURCHASES * PRICE,
      averageOrderValue: PRICE,
      booksSold: PURCHASES,
      paymentSuccessRate: 100,
      totalRefunds: 0,
      refundedAmount: 0,
    });
  });
});
