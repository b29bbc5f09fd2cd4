// Hive Gateway as its makers benchmark it (graphql-hive/graphql-gateways-benchmark,
// ChilliCream/graphql-gateway-benchmarks), for the gateway benchmark's ladder (bench/ladder.ts):
// JIT and gateway-level (inbound) deduplication of identical client requests in flight, or, with
// BENCH_HIVE_RUST_PLANNER set to the path of @graphql-hive/router-runtime, the Rust query planner,
// which runs without JIT (with it, every root field that needs a subgraph answers null). Both
// forward the caller's Authorization to the subgraphs, as our gateway does.
const rustPlanner = process.env.BENCH_HIVE_RUST_PLANNER;
const planner = rustPlanner ? await import(rustPlanner) : undefined;
// The package is CommonJS: its exports come named or under `default`, depending on what Node detects.
const unifiedGraphHandler = planner?.unifiedGraphHandler ?? planner?.default?.unifiedGraphHandler;

export const gatewayConfig = {
  ...(rustPlanner ? { unifiedGraphHandler } : { jit: true, inboundInflightRequestDeduplication: true }),
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') ?? '' }),
  },
  logging: 'warn',
};
