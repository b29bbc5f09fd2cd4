// Hive Gateway in the live-figures benchmark (bench/subscriptions.ts): the dashboard as a
// subscription served from Redis pub/sub with @resolveTo(pubsubTopic), which is how its makers
// document event-fed subscriptions. The benchmark publishes the dashboard after each of the same
// events our gateway follows; every subscriber gets what was published.
import { RedisPubSub } from '@graphql-hive/pubsub/redis';
import Redis from 'ioredis';

const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export const gatewayConfig = {
  pubsub: new RedisPubSub({ pub: new Redis(url), sub: new Redis(url) }, { channelPrefix: process.env.BENCH_REDIS_PREFIX ?? 'bench' }),
  additionalTypeDefs: /* GraphQL */ `
    extend type Subscription {
      dashboardFeed: Dashboard! @resolveTo(pubsubTopic: "dashboard")
    }
  `,
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') ?? '' }),
  },
  logging: 'warn',
};
