/**
 * What feeds the live subscriptions of a gateway process: the topics their fields name, and the
 * end of rights (`sessions-revoked`, `user-deleted`), read from the bus in a consumer group of this
 * process's own (`gateway-live.<random>`), so every replica sees every event, from the moment it
 * subscribes (a live feed has nothing to catch up on: a stream's first value is a query).
 */
import { randomUUID } from 'node:crypto';
import type { EventBus, Subscription } from '../../platform/events/bus';
import { parseEvent, PoisonMessageError } from '../../platform/events/consumer';
import { SessionsRevokedEvent, TOPICS, UserDeletedEvent } from '../../platform/events/topics';
import { GRAPHQL_CODES } from '../../platform/graphql-errors';
import type { Logger } from '../../platform/logger';
import type { LiveHub } from './hub';
import { endResult } from './stream';

export const SESSION_ENDED = endResult(GRAPHQL_CODES.UNAUTHENTICATED, 'The session was ended: sign in again and subscribe again');
export const USER_DELETED = endResult(GRAPHQL_CODES.UNAUTHENTICATED, 'The account was deleted');

function payloadOf(value: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function endRights(hub: LiveHub, topic: string, value: string): Promise<void> {
  if (topic === TOPICS.sessionsRevoked) {
    const event = await parseEvent(SessionsRevokedEvent, value);
    const userId = event.userId.toLowerCase();
    const sessions = new Set(event.sessionIds.map((id) => id.toLowerCase()));
    const revokedAt = Date.parse(event.occurredAt);
    // No session named: every token of the user issued up to the revocation (platform/revocations.ts).
    hub.endWhere((caller) => caller.userId === userId && (sessions.size > 0 ? sessions.has(caller.sessionId) : caller.issuedAtMs <= revokedAt), SESSION_ENDED);
  } else {
    const event = await parseEvent(UserDeletedEvent, value);
    const userId = event.userId.toLowerCase();
    hub.endWhere((caller) => caller.userId === userId, USER_DELETED);
  }
}

export function followLiveTopics(bus: EventBus, hub: LiveHub, logger: Logger): Promise<Subscription> {
  return bus.subscribe({
    groupId: `gateway-live.${randomUUID()}`,
    topics: [...hub.topics, TOPICS.sessionsRevoked, TOPICS.userDeleted],
    fromBeginning: false,
    handleBatch: async (messages) => {
      for (const message of messages) {
        if (message.topic === TOPICS.sessionsRevoked || message.topic === TOPICS.userDeleted) {
          try {
            await endRights(hub, message.topic, message.value);
          } catch (error) {
            if (!(error instanceof PoisonMessageError)) throw error;
            logger.warn({ topic: message.topic, offset: message.offset, reason: error.message }, 'unreadable message skipped by the live subscriptions');
          }
          continue;
        }
        const payload = payloadOf(message.value);
        if (payload) hub.onEvent(message.topic, payload);
      }
    },
  });
}
