/**
 * What the auth service publishes (`sessions-revoked`, whenever sessions end, so every token
 * verifier refuses their tokens; `email-verified`, so the profile shows it) and consumes (`user-deleted`, which ends the account and its sessions).
 */
import type { EntityManager } from 'typeorm';
import type { Subscription } from '../../platform/events/bus';
import { enqueueEvent } from '../../platform/events/outbox';
import { TOPICS } from '../../platform/events/topics';
import type { ServiceEvents } from '../../rest-compat/service';

/** What the consumer has done: the auth service's (declared here, so this file imports no service). */
export interface AuthEffects {
  removeAccount(manager: EntityManager, userId: string): Promise<void>;
}

/** `sessionIds` empty: every session of the user, its tokens issued up to `at`. */
export function publishSessionsRevoked(manager: EntityManager, userId: string, sessionIds: string[], at: Date): Promise<void> {
  return enqueueEvent(manager, TOPICS.sessionsRevoked, userId, { userId, sessionIds }, at);
}

export function publishEmailVerified(manager: EntityManager, userId: string, at: Date): Promise<void> {
  return enqueueEvent(manager, TOPICS.emailVerified, userId, { userId }, at);
}

export function authConsumers(events: ServiceEvents, auth: AuthEffects): Promise<Subscription>[] {
  return [events.consume({ topic: TOPICS.userDeleted, apply: (event, manager) => auth.removeAccount(manager, event.userId.toLowerCase()) })];
}
