// Hive Gateway's configuration in the gateway benchmark (bench/gateway.ts): it forwards the
// caller's Authorization to the subgraphs, as our gateway does; everything else is its default,
// in-flight deduplication of identical subgraph requests included. The bench also runs it with
// that deduplication off (BENCH_HIVE_DEDUPLICATE=false), beside our gateway with its own off.
const deduplicate = process.env.BENCH_HIVE_DEDUPLICATE !== 'false';

export const gatewayConfig = {
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') ?? '' }),
  },
  ...(deduplicate ? {} : { transportEntries: { '*.http': { options: { deduplicateInflightRequests: false } } } }),
  logging: 'warn',
};
