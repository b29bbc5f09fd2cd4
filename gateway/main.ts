/**
 * Starts the gateway alone on GATEWAY_PORT (default 8080), in front of the services at `<SERVICE>_URL`:
 * one process, or `GATEWAY_WORKERS` of them on the same port (platform/workers.ts).
 */
import { runAlone } from '../platform/run';
import { graphqlHalf } from './graphql';
import { createGateway, type GraphqlHalf } from './index';

/** `graphql`: the federated half (gateway/graphql.ts); without it the gateway serves REST only. */
export function startGatewayAlone(graphql?: GraphqlHalf): Promise<void> {
  return runAlone('gateway', (deps) => createGateway({ config: deps.config, logger: deps.logger, mountGraphql: graphql?.(deps) }), {
    workers: (config) => config.gatewayWorkers,
  });
}

void startGatewayAlone(graphqlHalf);
