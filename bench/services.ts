/**
 * The services the gateway benchmark puts its gateways in front of, in a process of their own (the
 * production shape: gateway and services apart): auth, user, book (the demo catalogue) and
 * analytics, SQLite and the in-process bus, on ports the system picks. Analytics is filled with
 * payments for the catalogue's books, so the best sellers point at real `Book`s. Once ready it
 * writes one JSON line to stdout: the services' URLs and an admin's Authorization header. It stops
 * on SIGTERM or SIGINT.
 */
import 'reflect-metadata';
import { adminSession, startStack } from '../test/stack';
import { paymentEvents } from './analytics';

const PAYMENTS = 500;

async function main(): Promise<void> {
  const stack = await startStack({ services: ['book', 'analytics'], env: { LOG_LEVEL: 'warn', DB_URL: '', KAFKA_BROKERS: '', SEED_DEMO_CATALOGUE: 'true' } });
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
    if (res.ok && ((await res.json()) as { totalOrders: number }).totalOrders === PAYMENTS) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  process.stdout.write(`${JSON.stringify({ urls: stack.urls, authorization: bearer })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
