/**
 * Reading after events (platform/events/after-events.ts) on a real service: a GraphQL request that
 * names an event, with the internal key, is answered once the service has applied it; without the
 * key it is answered at once.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { events, item, book, publish } from '../../test/analytics-events';
import { adminSession, INTERNAL_KEY, startStack, type Stack } from '../../test/harness';
import { INTERNAL_KEY_HEADER } from '../auth';
import { AFTER_EVENTS_HEADER } from './after-events';
import { TOPICS } from './topics';

jest.setTimeout(60_000);

let stack: Stack, bearer: string;

beforeAll(async () => {
  stack = await startStack({ services: ['analytics'] });
  bearer = (await adminSession(stack)).bearer;
});
afterAll(async () => {
  await stack?.stop();
});

const dashboard = (headers: Record<string, string>) =>
  request(stack.urls.analytics)
    .post('/graphql')
    .set({ authorization: bearer, 'content-type': 'application/json', ...headers })
    .send({ query: '{ dashboard { paidOrders } }' })
    .then((res) => res.body as { data: { dashboard: { paidOrders: number } } });

describe('a request that names events', () => {
  it('is answered once the service has applied them: the answer shows the event published after it arrived', async () => {
    const before = (await dashboard({})).data.dashboard.paidOrders;
    const paid = events(randomUUID(), 12, [item(book(1), 1, 12)]).success('2026-11-20');
    const answer = dashboard({ [AFTER_EVENTS_HEADER]: `${TOPICS.paymentSuccess}:${paid.event.eventId}`, [INTERNAL_KEY_HEADER]: INTERNAL_KEY });
    // The event exists only after the request is held (a publish made before would prove nothing).
    await new Promise((resolve) => setTimeout(resolve, 200));
    await publish(stack, [paid]);
    expect((await answer).data.dashboard.paidOrders).toBe(before + 1);
  });

  it('is not held without the internal key: the answer does not wait for the event', async () => {
    const before = (await dashboard({})).data.dashboard.paidOrders;
    const paid = events(randomUUID(), 7, [item(book(2), 1, 7)]).success('2026-11-20');
    const answer = await dashboard({ [AFTER_EVENTS_HEADER]: `${TOPICS.paymentSuccess}:${paid.event.eventId}` });
    await publish(stack, [paid]);
    expect(answer.data.dashboard.paidOrders).toBe(before);
  });
});
