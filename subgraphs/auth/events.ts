/** What the auth service consumes: `user-deleted` ends the account and its sessions (announced as `sessions-revoked`). */
import type { Database } from '../../platform/database';
import type { EventBus, Subscription } from '../../platform/events/bus';
import { consume } from '../../platform/events/consumer';
import { TOPICS, UserDeletedEvent } from '../../platform/events/topics';
import type { Logger } from '../../platform/logger';
import type { AuthService } from './service';

export const AUTH_CONSUMER_GROUP = 'auth-service';

export function subscribeAuthEvents(bus: EventBus, db: Database, logger: Logger, service: AuthService, published: () => void): Promise<Subscription[]> {
  return Promise.all([
    consume({
      bus,
      db,
      logger,
      groupId: AUTH_CONSUMER_GROUP,
      topic: TOPICS.userDeleted,
      schema: UserDeletedEvent,
      apply: (event, manager) => service.removeAccount(manager, event.userId.toLowerCase()),
      afterCommit: published,
    }),
  ]);
}
