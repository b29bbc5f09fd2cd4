/**
 * A payment service killed mid-checkout (SIGKILL while Stripe is creating the PaymentIntent): the
 * intent exists at Stripe but was never attached to the payment. The client's retry with the same
 * checkoutId, on a payment service started anew on the same database, gets that payment and that
 * intent: one of each. It needs only a database two processes can open, so it runs on every run:
 * SQLite's file as well as MariaDB (no event crosses from the killed process to the test's).
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Payment } from '../../subgraphs/payment/entities';
import { createBook, paymentWhen } from '../commerce';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from '../harness';
import { paymentEnv, startPaymentInProcess, watchedSimulator, type WatchedSimulator } from './payments';
import { spawnService, type ServiceProcess } from './process';

jest.setTimeout(90_000);

describe('a payment service killed mid-checkout', () => {
  let stack: Stack;
  let stripe: WatchedSimulator;
  let killed: ServiceProcess | undefined;
  let paymentUrl: string | undefined;

  beforeAll(async () => {
    stack = await startStack({ services: ['book'] });
    stripe = await watchedSimulator(() => paymentUrl && `${paymentUrl}/api/payments/webhook`, stack.config.logLevel);
  }, 60_000);
  afterAll(async () => {
    killed?.child.kill('SIGKILL');
    await stripe?.stop();
    await stack?.stop();
  });

  it('gives the client that retries with the same checkoutId one payment and one PaymentIntent', async () => {
    const admin = await adminSession(stack);
    const book = await createBook(stack, admin.bearer, 'Interrupted Journeys', 20);
    const buyer = await registeredUser(stack);
    const checkoutId = randomUUID();
    const body = { checkoutId, items: [{ bookId: book.id, quantity: 2 }] };

    killed = await spawnService('payment', paymentEnv(stack, stripe.url));
    paymentUrl = killed.url;
    stripe.simulator.injectFaults({ delayMs: 3000 });
    const interrupted = request(killed.url)
      .post('/api/payments/checkout')
      .set('Authorization', buyer.bearer)
      .send(body)
      .then(
        (res) => `answered ${res.status}`,
        (error: unknown) => String(error),
      );
    await waitFor(() => stripe.intentRequests() === 1, { what: 'the checkout to ask Stripe for its PaymentIntent' });
    killed.child.kill('SIGKILL');
    expect((await killed.exited).signal).toBe('SIGKILL');
    // The client saw the connection drop, with no answer.
    expect(await interrupted).toMatch(/socket hang up|ECONNRESET/);
    // Stripe finishes the creation the dead service asked for.
    await waitFor(() => stripe.intentsFor(checkoutId).length === 1, { what: 'the orphaned PaymentIntent' });
    stripe.simulator.injectFaults({ delayMs: 0 });

    // On Kafka its consumer may first wait for the dead one's group session to expire (up to 30 s).
    const replacement = await startPaymentInProcess(stack, stripe.url);
    paymentUrl = stack.urls.payment;
    expect(await replacement.db.manager.findOneBy(Payment, { checkoutId })).toMatchObject({ paymentIntentId: null, status: 'PAYMENT_PENDING' });

    const retry = await request(paymentUrl).post('/api/payments/checkout').set('Authorization', buyer.bearer).send(body);
    expect(retry.status).toBe(200);
    const [intent] = stripe.intentsFor(checkoutId);
    expect(retry.body).toMatchObject({ checkoutId, amount: 40, status: 'PAYMENT_PENDING', paymentIntentId: intent.id });
    const again = await request(paymentUrl).post('/api/payments/checkout').set('Authorization', buyer.bearer).send(body);
    expect(again.status).toBe(200);
    expect(again.body.paymentId).toBe(retry.body.paymentId);

    expect(await replacement.db.manager.countBy(Payment, { checkoutId })).toBe(1);
    expect(stripe.intentsFor(checkoutId)).toHaveLength(1);
    expect(intent.amount).toBe(4000);

    // And the recovered checkout pays like any other.
    await stripe.simulator.confirm(intent.id);
    await paymentWhen(stack, buyer.bearer, retry.body.paymentId, (p) => p.status === 'SUCCESS', 'the recovered payment to succeed');
  });
});
