/** The user service: profiles, their search, update and deletion (CONTRACT §3). */
import { buildService, type ServiceDeps } from '../../rest-compat/service';
import { UserProfile } from './entities';
import { userConsumers } from './events';
import { CreateUserProfiles1732000000100 } from './migrations/1732000000100-CreateUserProfiles';
import { ProfileEmailVerified1732000000110 } from './migrations/1732000000110-ProfileEmailVerified';
import { userLoaders, userResolvers } from './resolvers';
import { userRoutes } from './routes';
import { UserService } from './service';

export function createUserService(deps: ServiceDeps) {
  return buildService(deps, {
    name: 'user',
    description: 'User profiles',
    dir: __dirname,
    basePath: '/api/user',
    entities: [UserProfile],
    migrations: [CreateUserProfiles1732000000100, ProfileEmailVerified1732000000110],
    build: ({ config, db, verifier, events }) => {
      const users = new UserService(db);
      return {
        routes: userRoutes(users, verifier, config.internalApiKey),
        subgraph: { resolvers: userResolvers(users), loaders: userLoaders(users) },
        consumers: () => userConsumers(events, users),
        expose: { users },
      };
    },
  });
}
