/** Builds the user service (REST routes, subgraph, outbox relay) from its dependencies. */
import path from 'node:path';
import type { Config } from '../../platform/config';
import { openDatabase } from '../../platform/database';
import type { EventBus } from '../../platform/events/bus';
import { OutboxEvent, OutboxRelay } from '../../platform/events/outbox';
import { ProcessedEvent } from '../../platform/events/consumer';
import type { Logger } from '../../platform/logger';
import { assembleService, type BookstoreService } from '../../rest-compat/service';
import { EventTables1732000000000 } from '../../platform/migrations/1732000000000-EventTables';
import { jwksVerifierFor, type TokenVerifier } from '../../platform/auth';
import { UserProfile } from './entities';
import { CreateUserProfiles1732000000100 } from './migrations/1732000000100-CreateUserProfiles';
import { userLoaders, userResolvers } from './resolvers';
import { userRoutes } from './routes';
import { UserService } from './service';

export interface UserServiceDeps {
  config: Config;
  logger: Logger;
  bus: EventBus;
  /** Defaults to the auth service's JWKS at `config.urls.auth`. */
  verifier?: TokenVerifier;
}

export async function createUserService(deps: UserServiceDeps): Promise<BookstoreService & { users: UserService }> {
  const { config, bus } = deps;
  const logger = deps.logger.child({ service: 'user' });
  const db = await openDatabase({
    service: 'user',
    config,
    entities: [UserProfile, OutboxEvent, ProcessedEvent],
    migrations: [EventTables1732000000000, CreateUserProfiles1732000000100],
  });
  const relay = new OutboxRelay({ db, bus, logger });
  const service = new UserService(db, () => relay.wake());
  const verifier = deps.verifier ?? jwksVerifierFor(config, { bus, logger, service: 'user' });
  const runtime = await assembleService({
    name: 'user',
    description: 'User profiles',
    db,
    logger,
    bus,
    basePath: '/api/user',
    routes: userRoutes(service, verifier, config.internalApiKey),
    subgraph: { schemaFile: path.join(__dirname, 'schema.graphql'), resolvers: userResolvers(service), loaders: userLoaders(service), verifier },
    relay,
  });
  return Object.assign(runtime, { users: service });
}
