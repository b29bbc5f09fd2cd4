// Hive Gateway's configuration in the gateway benchmark (bench/gateway.ts): it forwards the
// caller's Authorization to the subgraphs, as our gateway does; everything else is its default.
export const gatewayConfig = {
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') ?? '' }),
  },
  logging: 'warn',
};
