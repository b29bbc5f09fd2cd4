/**
 * A rush for the last copies (CONTRACT §4): `customers` (default 1,000) registered customers check
 * out one copy each of a book with `copies` (default 50) in stock, all at once, through the gateway;
 * every checkout answered 200 is then paid at the simulator, all at once. Measures each checkout's
 * latency under the rush, the rate the hot book's checkouts were answered, and what came of it:
 * checkouts refused, payments made, orders filled, orders refunded, the stock left. It speaks only
 * the REST routes every version of the system has, so the same file measures an older tree too.
 *
 *   node dist/bench/rush.js [customers] [copies]
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createBook } from '../test/commerce';
import { startGateway } from '../test/gateway';
import { adminSession, newUser, startStack } from '../test/stack';
import { waitFor } from '../test/wait';
import { percentile } from './measure';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

async function send(url: string, method: string, body?: unknown, bearer?: string): Promise<Answer> {
  const began = performance.now();
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(bearer ? { authorization: bearer } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {}, ms: performance.now() - began };
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function pool<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]);
      }
    }),
  );
  return results;
}

export async function rushBench(customers = 1000, copies = 50) {
  const stack = await startStack({ services: ['book', 'order', 'payment'], env: { LOG_LEVEL: 'warn' } });
  const gateway = await startGateway(stack.config);
  try {
    const admin = await adminSession(stack);
    const book = await createBook(stack, admin.bearer, 'A signed first edition', 120, copies);

    // Customers, registered and logged in beforehand (bcrypt is not what is measured).
    const buyers = await pool(
      Array.from({ length: customers }, (_, i) => i),
      16,
      async () => {
        const fields = newUser();
        const registered = await send(`${gateway.url}/auth/register`, 'POST', fields);
        if (registered.status !== 200) throw new Error(`register answered ${registered.status}`);
        const login = await send(`${gateway.url}/auth/login`, 'POST', { email: fields.email, password: fields.password, deviceId: 'rush' });
        return `Bearer ${String(login.body.accessToken)}`;
      },
    );

    const rushBegan = performance.now();
    const checkouts = await Promise.all(
      buyers.map((bearer) => send(`${gateway.url}/api/payments/checkout`, 'POST', { checkoutId: randomUUID(), items: [{ bookId: book.id, quantity: 1 }] }, bearer)),
    );
    const rushSeconds = (performance.now() - rushBegan) / 1000;
    const held = checkouts.flatMap((answer, i) => (answer.status === 200 ? [{ answer, bearer: buyers[i] }] : []));
    const refused = checkouts.filter((answer) => answer.status === 409).length;
    const otherAnswers = checkouts.filter((answer) => answer.status !== 200 && answer.status !== 409).map((answer) => answer.status);

    // Everyone who got a payment pays, all at once.
    await Promise.all(held.map(({ answer }) => stack.stripe!.confirm(String(answer.body.paymentIntentId))));
    const orders = await pool(held, 32, ({ answer, bearer }) =>
      waitFor(
        async () => {
          const order = await send(`${gateway.url}/api/orders/payment/${String(answer.body.paymentId)}`, 'GET', undefined, bearer);
          return order.status === 200 ? order.body : undefined;
        },
        { what: 'an order of the rush', timeoutMs: 120_000 },
      ),
    );
    const filled = orders.filter((order) => order.status === 'CONFIRMED').length;
    const cancelled = orders.filter((order) => order.status === 'CANCELLED').length;
    // A cancelled order is refunded in full: wait for the money to come back.
    const refunded = await pool(
      held.filter((_, i) => orders[i].status === 'CANCELLED'),
      32,
      ({ answer, bearer }) =>
        waitFor(
          async () => {
            const payment = await send(`${gateway.url}/api/payments/${String(answer.body.paymentId)}`, 'GET', undefined, bearer);
            return payment.body.status === 'REFUNDED' ? payment.body : undefined;
          },
          { what: 'a refund of the rush', timeoutMs: 120_000 },
        ),
    );
    const stockLeft = (await send(`${gateway.url}/api/books/${book.id}`, 'GET')).body.stock;
    const latencies = checkouts.map((answer) => answer.ms);
    return {
      bench: 'rush',
      database: stack.config.dbUrl ? 'mysql' : 'sqlite',
      bus: stack.bus.kind,
      customers,
      copies,
      checkout: {
        p50Ms: Math.round(percentile(latencies, 50)),
        p99Ms: Math.round(percentile(latencies, 99)),
        maxMs: Math.round(Math.max(...latencies)),
        rushSeconds: Number(rushSeconds.toFixed(2)),
        answeredPerSecond: Math.round(customers / rushSeconds),
      },
      held: held.length,
      refusedAtCheckout: refused,
      otherAnswers,
      paid: held.length,
      ordersFilled: filled,
      ordersCancelledAndRefunded: refunded.length,
      ordersCancelled: cancelled,
      stockLeft,
      paidForCopiesNotThere: Math.max(0, filled - copies),
    };
  } finally {
    await gateway.stop();
    await stack.stop();
  }
}

if (require.main === module) {
  rushBench(Number(process.argv[2]) || undefined, Number(process.argv[3]) || undefined).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
