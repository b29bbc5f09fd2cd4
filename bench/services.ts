/**
 * The services the gateway benchmark puts its gateways in front of, in a process of their own (the
 * production shape: gateway and services apart): auth, user, book (the demo catalogue), order and
 * analytics, SQLite and the in-process bus, on ports the system picks. Analytics and order are fed
 * the same payments for the catalogue's books, so the best sellers and the orders' items point at
 * real `Book`s, and an order's book carries its sales (order → book → analytics). Once ready it
 * writes one JSON line to stdout: the services' URLs and an admin's Authorization header. It stops
 * on SIGTERM or SIGINT.
 */
import 'reflect-metadata';
import { adminSession, startStack } from '../test/stack';
import { paymentEvents } from './analytics';

const PAYMENTS = 500;

/** How many orders the order service has made from the payments so far (its list is paged by at most 200). */
async function orderCount(url: string, authorization: string): Promise<number> {
  let count = 0;
  for (;;) {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ orders(limit: 200, offset: ${count}) { orderId } }` }),
    });
    const page = ((await res.json()) as { data?: { orders: unknown[] } }).data?.orders;
    if (!page) return -1;
    count += page.length;
    if (page.length < 200) return count;
  }
}

async function main(): Promise<void> {
  // Errors only: the bench's payments ignore stock, so the book service warns of every oversold order.
  const stack = await startStack({
    services: ['book', 'order', 'analytics'],
    env: {
      LOG_LEVEL: 'error',
      DB_URL: '',
      KAFKA_BROKERS: '',
      SEED_DEMO_CATALOGUE: 'true',
      // The key our gateways get too (bench/peers.ts), so the services believe their forwarded headers.
      ...(process.env.INTERNAL_API_KEY ? { INTERNAL_API_KEY: process.env.INTERNAL_API_KEY } : {}),
    },
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    stack.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  const { bearer } = await adminSession(stack);
  const books = (await (await fetch(`${stack.urls.book}/api/books?limit=100`)).json()) as { id: string; title: string }[];
  await stack.bus.publish([...paymentEvents(PAYMENTS * 2, books)]);
  for (;;) {
    const res = await fetch(`${stack.urls.analytics}/analytics/dashboard`, { headers: { authorization: bearer } });
    const figures = res.ok ? ((await res.json()) as { totalOrders: number; paidOrders: number }) : undefined;
    if (figures?.totalOrders === PAYMENTS && (await orderCount(stack.urls.order, bearer)) === figures.paidOrders) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  process.stdout.write(`${JSON.stringify({ urls: stack.urls, authorization: bearer })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
