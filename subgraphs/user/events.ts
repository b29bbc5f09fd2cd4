/**
 * What the user service publishes (`user-deleted` when an admin deletes a profile: the auth service
 * then ends the account) and consumes (`email-verified`, which the profile shows).
 */
import type { EntityManager } from 'typeorm';
import type { Subscription } from '../../platform/events/bus';
import type { ServiceEvents } from '../../rest-compat/service';
import { enqueueEvent } from '../../platform/events/outbox';
import { TOPICS } from '../../platform/events/topics';

export function publishUserDeleted(manager: EntityManager, userId: string): Promise<void> {
  return enqueueEvent(manager, TOPICS.userDeleted, userId, { userId });
}

export interface ProfileEffects {
  markEmailVerified(manager: EntityManager, userId: string): Promise<void>;
}

export function userConsumers(events: ServiceEvents, profiles: ProfileEffects): Promise<Subscription>[] {
  return [events.consume({ topic: TOPICS.emailVerified, apply: (event, manager) => profiles.markEmailVerified(manager, event.userId) })];
}
