import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { ConsumedMessage, Subscription } from '../../platform/events/bus';
import { In } from 'typeorm';
import { ProcessedEvent, consumerGroupOf } from '../../platform/events/consumer';
import { TOPICS } from '../../platform/events/topics';
import { checkout, createBook, paymentWhen } from '../../test/commerce';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from '../../test/harness';

let stack: Stack;
let observer: Subscription;
const seen: ConsumedMessage[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'] });
  observer = await stack.bus.subscribe({
    groupId: `observer-${randomUUID()}`,
    topics: [TOPICS.paymentCreated, TOPICS.paymentSuccess],
    handle: async (message) => void seen.push(message),
  });
}, 60_000);
afterAll(async () => {
  await observer?.stop();
  await stack?.stop();
});

it('counts a real purchase once, whatever is redelivered or reported again by the legacy event', async () => {
  const admin = await adminSession(stack);
  const dashboard = async () => (await request(stack.urls.analytics).get('/analytics/dashboard').set('Authorization', admin.bearer)).body;
  const novel = await createBook(stack, admin.bearer, 'Persuasion', 12.5);
  const buyer = await registeredUser(stack);
  const { body: payment } = await checkout(stack, buyer.bearer, [{ bookId: novel.id, quantity: 2 }]);
  await stack.stripe!.confirm(payment.paymentIntentId);
  await paymentWhen(stack, buyer.bearer, payment.paymentId, (p) => p.status === 'SUCCESS', 'SUCCESS');

  const expected = {
    totalOrders: 1,
    paidOrders: 1,
    failedPayments: 0,
    totalRevenue: 25,
    averageOrderValue: 25,
    booksSold: 2,
    paymentSuccessRate: 100,
    totalRefunds: 0,
    refundedAmount: 0,
  };
  await waitFor(async () => JSON.stringify(await dashboard()) === JSON.stringify(expected), { what: 'the purchase in the dashboard' });

  // The same events delivered again as they were, then again under new event ids (a producer
  // retry), and the legacy payment-completed for the same payment.
  const mine = seen.filter((m) => JSON.parse(m.value).paymentId === payment.paymentId);
  expect(mine.map((m) => m.topic).sort()).toEqual([TOPICS.paymentCreated, TOPICS.paymentSuccess]);
  await stack.bus.publish(mine.map(({ topic, key, value }) => ({ topic, key, value })));
  const copies = mine.map(({ topic, key, value }) => ({ topic, key, value: JSON.stringify({ ...JSON.parse(value), eventId: randomUUID() }) }));
  await stack.bus.publish(copies);
  const legacy = {
    eventId: randomUUID(),
    type: 'PaymentCompletedEvent',
    occurredAt: new Date().toISOString(),
    paymentId: payment.paymentId,
    orderId: randomUUID(),
    transactionId: payment.paymentIntentId,
    amount: 25,
  };
  await stack.bus.publish([{ topic: TOPICS.paymentCompleted, key: payment.paymentId, value: JSON.stringify(legacy) }]);

  // Each copy follows its exact redelivery on the same partition: once all are recorded, all were seen.
  const analyticsDb = stack.services.analytics!.db;
  const awaited = [...copies.map((c) => JSON.parse(c.value).eventId as string), legacy.eventId];
  await waitFor(async () => (await analyticsDb.manager.count(ProcessedEvent, { where: { consumer: consumerGroupOf('analytics'), eventId: In(awaited) } })) === awaited.length, {
    what: 'the copies and the legacy event to be ingested',
  });
  expect(await dashboard()).toEqual(expected);
  const books = await request(stack.urls.analytics).get('/analytics/books').set('Authorization', admin.bearer);
  expect(books.body).toEqual({ booksSold: 2, topBooks: [{ bookId: novel.id, bookTitle: 'Persuasion', quantitySold: 2, revenue: 25 }] });
});
