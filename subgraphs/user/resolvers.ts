/** GraphQL resolvers of the user subgraph, as thin as routes.ts: parse, authorize, call the service. */
import type DataLoader from 'dataloader';
import { batchLoader, requireAuth, type SubgraphContext } from '../../platform/subgraph';
import type { Principal } from '../../platform/auth';
import { parseUuid, validateBody } from '../../platform/validation';
import type { UserResponseDto } from '../../platform/contracts/profiles';
import { parseKeyword, UserRequestDto } from './dto';
import type { Resolvers } from './generated/resolvers-types';
import type { UserService } from './service';

export interface UserLoaders {
  /** Profiles the caller may read (its own, or any for an ADMIN). */
  profiles: DataLoader<string, UserResponseDto>;
}

type Ctx = SubgraphContext<UserLoaders>;

/** GraphQL's null for an optional input field means "not sent", as an absent JSON field does in REST. */
function withoutNulls(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null));
}

export function userLoaders(service: UserService): (principal: Principal | null) => UserLoaders {
  return (principal) => ({ profiles: batchLoader(principal, (caller, ids) => service.profilesFor(caller, ids)) });
}

export function userResolvers(service: UserService): Resolvers<Ctx> {
  return {
    Query: {
      me: (_, __, ctx) => service.getUser(requireAuth(ctx).userId),
      user: (_, args, ctx) => {
        requireAuth(ctx);
        return ctx.loaders.profiles.load(parseUuid(args.userId, 'userId'));
      },
      users: (_, __, ctx) => service.listUsers(requireAuth(ctx)),
      searchUsers: (_, args, ctx) => {
        const principal = requireAuth(ctx);
        return service.searchUsers(principal, parseKeyword(args.keyword));
      },
    },
    Mutation: {
      updateUser: async (_, args, ctx) => {
        const principal = requireAuth(ctx);
        const id = parseUuid(args.userId, 'userId');
        return service.updateUser(principal, id, await validateBody(UserRequestDto, withoutNulls(args.input)));
      },
      deleteUser: async (_, args, ctx) => {
        const principal = requireAuth(ctx);
        const id = parseUuid(args.userId, 'userId');
        await service.deleteUser(principal, id);
        return id;
      },
    },
    User: {
      __resolveReference: (reference, ctx) => {
        requireAuth(ctx);
        return ctx.loaders.profiles.load(reference.userId);
      },
    },
  };
}
