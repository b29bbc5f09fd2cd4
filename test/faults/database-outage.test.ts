/**
 * The database stopped and started under traffic (a MariaDB server of the test's own): while it is
 * down every request answers the contract's 503 envelope promptly (never 500, never a hang) and
 * health says DOWN; once it is back the services serve fully, and every payment whose checkout was
 * answered 200 is still there as it was.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createBook, paymentWhen, type CatalogueBook } from '../commerce';
import { adminSession, expectEnvelope, registeredUser, startStack, waitFor, type Stack } from '../harness';
import { OwnMariaDb, describeFaults } from './infra';

jest.setTimeout(120_000);

type Phase = 'before' | 'down' | 'after';

interface Outcome {
  phase: Phase;
  what: string;
  status: number | 'no answer';
  body: Record<string, unknown>;
}

/** Checkouts and reads from a few clients at once, each answer recorded with the phase it was asked in. */
function traffic(stack: Stack, bearer: string, book: CatalogueBook, phase: () => Phase) {
  const outcomes: Outcome[] = [];
  const paid: { paymentId: string; amount: number }[] = [];
  let running = true;
  const ask = async (what: string, send: () => request.Test) => {
    const asked = phase();
    try {
      // A hang is a failure too: no request may take longer than this.
      const res = await send().timeout(10_000);
      outcomes.push({ phase: asked, what, status: res.status, body: res.body });
      return res;
    } catch (error) {
      outcomes.push({ phase: asked, what, status: 'no answer', body: { error: String(error) } });
      return undefined;
    }
  };
  const client = async (n: number) => {
    for (let i = 0; running; i++) {
      const quantity = 1 + ((n + i) % 3);
      const res = await ask('checkout', () =>
        request(stack.urls.payment)
          .post('/api/payments/checkout')
          .set('Authorization', bearer)
          .send({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity }] }),
      );
      if (res?.status === 200) paid.push({ paymentId: res.body.paymentId, amount: res.body.amount });
      const known = paid[(n + i) % Math.max(paid.length, 1)];
      if (known) await ask('read payment', () => request(stack.urls.payment).get(`/api/payments/${known.paymentId}`).set('Authorization', bearer));
      await ask('read book', () => request(stack.urls.book).get(`/api/books/${book.id}`));
    }
  };
  const clients = Promise.all([0, 1, 2, 3].map(client));
  return {
    outcomes,
    paid,
    async stop() {
      running = false;
      await clients;
    },
  };
}

describeFaults('the database stopped and started under traffic', () => {
  let mariadb: OwnMariaDb;
  let stack: Stack;

  beforeAll(async () => {
    mariadb = await OwnMariaDb.create();
    stack = await startStack({ services: ['book', 'payment'], env: { DB_URL: mariadb.url } });
  }, 90_000);
  afterAll(async () => {
    await mariadb?.start().catch(() => undefined);
    await stack?.stop();
    await mariadb?.destroy();
  });

  it('answers 503 while it is down, serves fully once it is back, and loses no committed payment', async () => {
    const admin = await adminSession(stack);
    const book = await createBook(stack, admin.bearer, 'The Long Outage', 12.5);
    const buyer = await registeredUser(stack);
    const health = async (url: string) => request(url).get('/actuator/health').timeout(10_000);

    // Paid before the outage: these must come back SUCCESS.
    const succeeded: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(stack.urls.payment)
        .post('/api/payments/checkout')
        .set('Authorization', buyer.bearer)
        .send({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] });
      expect(res.status).toBe(200);
      await stack.stripe!.confirm(res.body.paymentIntentId);
      await paymentWhen(stack, buyer.bearer, res.body.paymentId, (p) => p.status === 'SUCCESS', 'a payment before the outage to succeed');
      succeeded.push(res.body.paymentId);
    }

    let phase: Phase = 'before';
    const load = traffic(stack, buyer.bearer, book, () => phase);
    try {
      await waitFor(() => load.paid.length >= 20, { what: '20 checkouts before the outage', timeoutMs: 30_000 });

      await mariadb.stop();
      phase = 'down';
      const down = await Promise.all([
        request(stack.urls.payment)
          .post('/api/payments/checkout')
          .set('Authorization', buyer.bearer)
          .send({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] })
          .timeout(10_000),
        request(stack.urls.payment).get(`/api/payments/${succeeded[0]}`).set('Authorization', buyer.bearer).timeout(10_000),
        request(stack.urls.payment).get('/api/payments').set('Authorization', buyer.bearer).timeout(10_000),
        request(stack.urls.book).get(`/api/books/${book.id}`).timeout(10_000),
        request(stack.urls.book).get('/api/books').timeout(10_000),
      ]);
      for (const res of down) expectEnvelope(res, 503, 'The database is unavailable; try again later');
      for (const url of [stack.urls.payment, stack.urls.book]) {
        const res = await health(url);
        expect(res.status).toBe(503);
        expect(res.body).toMatchObject({ status: 'DOWN', components: { db: { status: 'DOWN' } } });
      }
      await waitFor(() => load.outcomes.filter((o) => o.phase === 'down').length >= 30, { what: '30 answers of the traffic while the database is down' });

      phase = 'after';
      await mariadb.start();
      for (const url of [stack.urls.payment, stack.urls.book]) {
        await waitFor(async () => (await health(url)).status === 200, { what: `${url} to be UP again` });
      }
      const paidBefore = load.paid.length;
      await waitFor(() => load.paid.length >= paidBefore + 10, { what: '10 checkouts of the traffic after the outage' });
    } finally {
      await load.stop();
    }

    const fresh = await request(stack.urls.payment)
      .post('/api/payments/checkout')
      .set('Authorization', buyer.bearer)
      .send({ checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 2 }] });
    expect(fresh.status).toBe(200);
    await stack.stripe!.confirm(fresh.body.paymentIntentId);
    await paymentWhen(stack, buyer.bearer, fresh.body.paymentId, (p) => p.status === 'SUCCESS', 'a payment after the outage to succeed');

    // Every answer was 200 or the 503 envelope, none hung; while the database was down, only 503.
    const statuses = (phase: Phase) => [...new Set(load.outcomes.filter((o) => o.phase === phase).map((o) => `${o.what} ${o.status}`))].sort();
    expect(statuses('down')).toEqual(['checkout 503', 'read book 503', 'read payment 503']);
    for (const outcome of load.outcomes) {
      expect([outcome.status, outcome.body]).toEqual(
        outcome.status === 200 ? [200, expect.anything()] : [503, expect.objectContaining({ status: 503, message: expect.any(String) })],
      );
    }

    // No committed payment lost: each one answered 200 reads back the same, and the paid ones stay paid.
    for (const { paymentId, amount } of load.paid) {
      const res = await request(stack.urls.payment).get(`/api/payments/${paymentId}`).set('Authorization', buyer.bearer);
      expect([res.status, res.body.amount, res.body.status]).toEqual([200, amount, 'PAYMENT_PENDING']);
    }
    for (const paymentId of succeeded) {
      const res = await request(stack.urls.payment).get(`/api/payments/${paymentId}`).set('Authorization', buyer.bearer);
      expect([res.status, res.body.status]).toEqual([200, 'SUCCESS']);
    }
  });
});
