/** GraphQL resolvers of the auth subgraph, as thin as routes.ts: parse, authorize, call the session directory. */
import DataLoader from 'dataloader';
import { requireAuth, type SubgraphContext } from '../../platform/subgraph';
import { assertRole, type Principal } from '../../platform/auth';
import type { Config } from '../../platform/config';
import { unauthenticated } from '../../platform/errors';
import { mailboxView } from '../../platform/mail/local-mailbox';
import { parseUuid, validationError } from '../../platform/validation';
import type { Resolvers } from './generated/resolvers-types';
import type { SessionDirectory, SessionView } from './sessions';

export interface AuthLoaders {
  /** Each user's sessions, by userId, for `User.sessions`. */
  sessionsOfUser: DataLoader<string, SessionView[]>;
}

type Ctx = SubgraphContext<AuthLoaders>;

export function authLoaders(sessions: SessionDirectory): (principal: Principal | null) => AuthLoaders {
  return (principal) => ({
    sessionsOfUser: new DataLoader<string, SessionView[]>(
      (userIds) =>
        Promise.all(userIds.map((userId) => (principal ? sessions.ofUser(principal, userId) : Promise.reject(unauthenticated())).catch((error: unknown) => error as Error))),
      { cacheKeyFn: (userId) => userId.toLowerCase() },
    ),
  });
}

/** How many of the local mailbox's e-mails one query reads at most. */
const MAILBOX_MAX_LIMIT = 200;

export function authResolvers(sessions: SessionDirectory, mail: Config['mail']): Resolvers<Ctx> {
  return {
    Query: {
      mySessions: (_, __, ctx) => sessions.mine(requireAuth(ctx)),
      localMailbox: (_, args, ctx) => {
        assertRole(requireAuth(ctx), 'ADMIN');
        const limit = args.limit ?? 50;
        if (limit < 1 || limit > MAILBOX_MAX_LIMIT) throw validationError(`limit: must be an integer from 1 to ${MAILBOX_MAX_LIMIT}`);
        return mailboxView(mail, limit);
      },
    },
    Mutation: {
      endSession: async (_, args, ctx) => {
        const principal = requireAuth(ctx);
        const sessionId = parseUuid(args.sessionId, 'sessionId');
        await sessions.end(principal, sessionId);
        return sessionId;
      },
      endUserSessions: (_, args, ctx) => {
        const principal = requireAuth(ctx);
        return sessions.endAll(principal, parseUuid(args.userId, 'userId'));
      },
    },
    User: {
      sessions: (user, _, ctx) => {
        requireAuth(ctx);
        return ctx.loaders.sessionsOfUser.load(user.userId.toLowerCase());
      },
    },
  };
}
