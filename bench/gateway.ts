/**
 * The gateway's cost: the same REST route at the same concurrency, called directly and through the
 * gateway, one after the other in one run; and the admin dashboard as one GraphQL query through the
 * gateway next to the REST `/analytics/dashboard` called directly.
 */
import 'reflect-metadata';
import { graphqlHalf } from '../gateway/graphql';
import { createLogger } from '../platform/logger';
import { createBook } from '../test/commerce';
import { startGateway } from '../test/gateway';
import { adminSession, startStack } from '../test/stack';
import { load, type LoadResult } from './load';

const CONNECTIONS = 10;
const DASHBOARD_QUERY = '{ dashboard { totalOrders paidOrders failedPayments totalRevenue averageOrderValue booksSold paymentSuccessRate } }';

const ratio = (a: number, b: number) => Number((a / b).toFixed(2));

function compare(direct: LoadResult, gateway: LoadResult) {
  return {
    direct,
    gateway,
    throughputRatio: ratio(gateway.requestsPerSecond, direct.requestsPerSecond),
    p50Ratio: ratio(gateway.p50Ms, direct.p50Ms),
    p99Ratio: ratio(gateway.p99Ms, direct.p99Ms),
  };
}

export async function gatewayBench(seconds = 10) {
  const stack = await startStack({ services: ['book', 'analytics'], env: { LOG_LEVEL: 'warn' } });
  const gateway = await startGateway(stack.config, { mountGraphql: graphqlHalf({ config: stack.config, logger: createLogger('warn') }) });
  try {
    const admin = await adminSession(stack);
    const book = await createBook(stack, admin.bearer, 'Bench book', 10.5);
    const path = `/api/books/${book.id}`;
    const directFirst = await load({ url: `${stack.urls.book}${path}`, connections: CONNECTIONS, seconds });
    const throughGateway = await load({ url: `${gateway.url}${path}`, connections: CONNECTIONS, seconds });
    const rest = compare(directFirst, throughGateway);

    const dashboardRest = await load({ url: `${stack.urls.analytics}/analytics/dashboard`, headers: { authorization: admin.bearer }, connections: CONNECTIONS, seconds });
    const dashboardGraphql = await load({
      url: `${gateway.url}/graphql`,
      method: 'POST',
      headers: { authorization: admin.bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ query: DASHBOARD_QUERY }),
      connections: CONNECTIONS,
      seconds,
    });
    return {
      bench: 'gateway',
      connections: CONNECTIONS,
      seconds,
      restProxy: rest,
      dashboard: compare(dashboardRest, dashboardGraphql),
    };
  } finally {
    await gateway.stop();
    await stack.stop();
  }
}

if (require.main === module) {
  gatewayBench(Number(process.argv[2]) || undefined).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
