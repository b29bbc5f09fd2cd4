/**
 * Checkout throughput and latency through the payment service with the Stripe simulator (each
 * request a new cart: book batch, buyer profile, PaymentIntent, two transactions), and login
 * throughput against what bcrypt alone allows at the same cost and concurrency.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import bcrypt from 'bcrypt';
import { BCRYPT_COST } from '../subgraphs/auth/service';
import { createBook } from '../test/commerce';
import { adminSession, registeredUser, startStack } from '../test/stack';
import { load } from './load';

const CONNECTIONS = 10;

/** bcrypt.compare calls per second with `concurrency` in flight, for `seconds`. */
async function bcryptRate(concurrency: number, seconds: number): Promise<number> {
  const hash = await bcrypt.hash('Secret123', BCRYPT_COST);
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      await bcrypt.compare('Secret123', hash);
      done += 1;
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done / ((performance.now() - began) / 1000);
}

export async function commerceBench(seconds = 10) {
  const stack = await startStack({ services: ['book', 'order', 'payment'], env: { LOG_LEVEL: 'warn' } });
  try {
    const admin = await adminSession(stack);
    const books = await Promise.all([1, 2, 3].map((n) => createBook(stack, admin.bearer, `Bench book ${n}`, 9.99 + n)));
    const buyer = await registeredUser(stack);

    const checkout = await load({
      url: `${stack.urls.payment}/api/payments/checkout`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: buyer.bearer },
      bodyFor: () => JSON.stringify({ checkoutId: randomUUID(), items: books.map((book, i) => ({ bookId: book.id, quantity: i + 1 })) }),
      connections: CONNECTIONS,
      seconds,
    });

    const bcryptAlone = await bcryptRate(CONNECTIONS, seconds);
    const login = await load({
      url: `${stack.urls.auth}/auth/login`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: buyer.email, password: buyer.password, deviceId: 'bench' }),
      connections: CONNECTIONS,
      seconds,
    });
    return {
      bench: 'commerce',
      database: stack.config.dbUrl ? 'mysql' : 'sqlite',
      bus: stack.bus.kind,
      connections: CONNECTIONS,
      seconds,
      checkout,
      login,
      bcryptComparesPerSecond: Math.round(bcryptAlone),
      loginVsBcrypt: Number((login.requestsPerSecond / bcryptAlone).toFixed(2)),
    };
  } finally {
    await stack.stop();
  }
}

if (require.main === module) {
  commerceBench(Number(process.argv[2]) || undefined).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
