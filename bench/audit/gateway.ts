/**
 * Our gateway on a supergraph of graphql-hive/federation-gateway-audit (bench/audit/run.sh starts
 * it for each test suite): the production gateway (gateway/index.ts with gateway/graphql.ts), so the
 * front path, our subgraph source with its deduplication, and the limits are all in the path. The
 * audit's subgraphs are not ours: their names are in no `config.urls`, so each is reached at the URL
 * the supergraph gives. `node dist/bench/audit/gateway.js <supergraph file> <port>`.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import { createGraphqlGateway } from '../../gateway/graphql';
import { createGateway } from '../../gateway/index';
import { loadConfig } from '../../platform/config';
import { createLogger } from '../../platform/logger';

async function main(): Promise<void> {
  const [supergraphFile, port] = process.argv.slice(2);
  if (!supergraphFile || !port) throw new Error('usage: node dist/bench/audit/gateway.js <supergraph file> <port>');
  const config = loadConfig(undefined, { embedded: true });
  const logger = createLogger(config.logLevel);
  const supergraphSdl = fs.readFileSync(supergraphFile, 'utf8');
  // The audit's health check is the gateway's own: no upstream of ours is there to ask.
  const gateway = await createGateway({
    config,
    logger,
    healthChecks: [],
    mountGraphql: async (app) => {
      const graphql = createGraphqlGateway({ config, logger, supergraphSdl });
      await graphql.mount(app);
      return { stop: () => graphql.stop(), front: graphql.front };
    },
  });
  await gateway.start(Number(port), '127.0.0.1');
  logger.warn({ port }, 'audit gateway ready');
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
