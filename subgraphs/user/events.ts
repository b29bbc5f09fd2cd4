/** What the user service publishes: `user-deleted` when an admin deletes a profile (the auth service then ends the account). It consumes nothing. */
import type { EntityManager } from 'typeorm';
import { enqueueEvent } from '../../platform/events/outbox';
import { TOPICS } from '../../platform/events/topics';

export function publishUserDeleted(manager: EntityManager, userId: string): Promise<void> {
  return enqueueEvent(manager, TOPICS.userDeleted, userId, { userId });
}
