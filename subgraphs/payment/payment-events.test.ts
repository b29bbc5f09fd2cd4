/**
 * `GET /api/payments/{paymentId}/events` (docs/subscriptions.md): a shop that does not speak GraphQL
 * learns "paid, order made" from a plain Server-Sent Events stream instead of polling, on the real
 * purchase flow and the run's bus.
 */
import request from 'supertest';
import { checkout, createBook, type CatalogueBook } from '../../test/commerce';
import { adminSession, registeredUser, startStack, type Stack } from '../../test/harness';
import { claimsOf, headerOf, nowSeconds, signingKey, signJwt } from '../../test/jwt';
import { openSse, type SseStream } from '../../test/sse';
import { waitFor } from '../../test/wait';

jest.setTimeout(60_000);

let stack: Stack, book: CatalogueBook;
const opened: SseStream[] = [];

beforeAll(async () => {
  stack = await startStack({ services: ['book', 'order', 'payment'] });
  book = await createBook(stack, (await adminSession(stack)).bearer, 'Streamed', 8);
});
afterEach(() => {
  for (const stream of opened.splice(0)) stream.close();
});
afterAll(async () => {
  await stack?.stop();
});

async function watch(paymentId: string, bearer: string): Promise<SseStream> {
  const stream = await openSse(`${stack.urls.payment}/api/payments/${paymentId}/events`, { headers: { authorization: bearer } });
  opened.push(stream);
  return stream;
}

async function pending(buyer: { bearer: string }): Promise<{ paymentId: string; paymentIntentId: string }> {
  const res = await checkout(stack, buyer.bearer, [{ bookId: book.id, quantity: 1 }]);
  expect(res.status).toBe(200);
  return res.body as { paymentId: string; paymentIntentId: string };
}

const states = (stream: SseStream) =>
  stream.events.filter((event) => event.event === 'payment').map((event) => JSON.parse(event.data) as { status: string; orderId: string | null });

describe('the payment as Server-Sent Events', () => {
  it('sends the payment at once, then paid, then its order, as GET /api/payments/{id} answers them', async () => {
    const buyer = await registeredUser(stack);
    const { paymentId, paymentIntentId } = await pending(buyer);
    const stream = await watch(paymentId, buyer.bearer);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = await stream.nth(0);
    expect(first.event).toBe('payment');
    expect(first.id).toEqual(expect.any(String));
    expect(JSON.parse(first.data)).toEqual((await request(stack.urls.payment).get(`/api/payments/${paymentId}`).set('Authorization', buyer.bearer)).body);

    await stack.stripe!.confirm(paymentIntentId);
    await waitFor(() => states(stream).some((state) => state.orderId !== null), { what: 'the order on the stream' });
    expect(states(stream).map((state) => state.status)).toEqual(expect.arrayContaining(['PAYMENT_PENDING', 'SUCCESS']));
    const last = states(stream).at(-1)!;
    expect(last).toEqual((await request(stack.urls.payment).get(`/api/payments/${paymentId}`).set('Authorization', buyer.bearer)).body);
  });

  it("answers 404 for someone else's payment and 401 without a token, before any stream", async () => {
    const owner = await registeredUser(stack);
    const other = await registeredUser(stack);
    const { paymentId } = await pending(owner);
    const res = await request(stack.urls.payment).get(`/api/payments/${paymentId}/events`).set('Authorization', other.bearer);
    expect(res.status).toBe(404);
    expect(res.body.message).toBe(`Payment not found: ${paymentId}`);
    expect((await request(stack.urls.payment).get(`/api/payments/${paymentId}/events`)).status).toBe(401);
  });

  it('ends the stream when the token expires and when its session is revoked', async () => {
    const buyer = await registeredUser(stack);
    const { paymentId } = await pending(buyer);
    const real = buyer.tokens.accessToken;
    const shortLived = signJwt({ ...claimsOf(real), exp: nowSeconds() + 2 }, signingKey(stack.config.jwt.privateKeyFile), { kid: headerOf(real).kid });
    const expiring = await watch(paymentId, `Bearer ${shortLived}`);
    await expiring.nth(0);
    expect(await expiring.nth(1, 10_000)).toMatchObject({ event: 'end', data: expect.stringContaining('UNAUTHENTICATED') });
    await expiring.closed;

    const revoked = await watch(paymentId, buyer.bearer);
    await revoked.nth(0);
    expect((await request(stack.urls.auth).post('/auth/logout').send({ refreshToken: buyer.tokens.refreshToken })).status).toBe(204);
    expect(await revoked.nth(1, 5000)).toMatchObject({ event: 'end' });
    await revoked.closed;
  });
});
