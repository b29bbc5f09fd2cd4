/**
 * Reading after events: a request that names events in `X-After-Events` (with the internal key) is
 * answered once this service has applied those of them it consumes, so an answer computed because
 * of an event shows that event. The gateway's live subscriptions send it when they run a
 * subscriber's selection again for an event (gateway/subscriptions/): the analytics service counts
 * `payment-success` on its own schedule, and without the wait the dashboard would be read before it
 * has. What this service applied is what `processed_events` records (platform/events/consumer.ts),
 * whichever of its replicas applied it; the wait is bounded, after which the request is answered as
 * it stands.
 */
import type { RequestHandler } from 'express';
import { In } from 'typeorm';
import { INTERNAL_KEY_HEADER, internalKeyMatches } from '../auth';
import type { Database } from '../database';
import { ProcessedEvent } from './consumer';

export const AFTER_EVENTS_HEADER = 'x-after-events';

/** Most events one request may name; the gateway sends the latest ones when more are pending. */
export const AFTER_EVENTS_MAX = 50;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `topic:eventId` entries, comma-separated, as the gateway writes them. */
export function afterEventsHeader(events: readonly { topic: string; eventId: string }[]): string {
  return events
    .slice(-AFTER_EVENTS_MAX)
    .map((event) => `${event.topic}:${event.eventId}`)
    .join(',');
}

/** The event ids of a header's entries whose topic `consumed` holds; malformed entries are ignored. */
export function eventsToAwait(header: string | undefined, consumed: ReadonlySet<string>): string[] {
  if (!header) return [];
  const ids = new Set<string>();
  for (const entry of header.split(',').slice(0, AFTER_EVENTS_MAX)) {
    const at = entry.lastIndexOf(':');
    const topic = entry.slice(0, at).trim();
    const id = entry.slice(at + 1).trim();
    if (at > 0 && consumed.has(topic) && UUID.test(id)) ids.add(id.toLowerCase());
  }
  return [...ids];
}

export interface AfterEventsOptions {
  db: Database;
  /** The name this service's consumers record applied events under (`<service>-service`). */
  consumer: string;
  /** The topics this service consumes (known once its consumers have started). */
  topics: ReadonlySet<string>;
  internalApiKey: string;
  /** Longest wait; default 2 s. */
  maxWaitMs?: number;
}

const POLL_MS = [5, 10, 20, 40, 50];

/** Resolves once `consumer` has applied every event of `ids` (lowercased), or `maxWaitMs` has passed. */
export async function awaitApplied(db: Database, consumer: string, ids: readonly string[], maxWaitMs: number): Promise<void> {
  let pending = [...ids];
  const deadline = Date.now() + maxWaitMs;
  for (let attempt = 0; pending.length > 0 && Date.now() < deadline; attempt += 1) {
    const applied = await db.manager.find(ProcessedEvent, { select: { eventId: true }, where: { consumer, eventId: In(pending) } });
    const done = new Set(applied.map((row) => row.eventId.toLowerCase()));
    pending = pending.filter((id) => !done.has(id));
    if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS[Math.min(attempt, POLL_MS.length - 1)]));
  }
}

/** Holds a request naming events until they are applied here (or the bound has passed). */
export function afterEvents(options: AfterEventsOptions): RequestHandler {
  const maxWaitMs = options.maxWaitMs ?? 2000;
  return async (req, _res, next) => {
    const header = req.headers[AFTER_EVENTS_HEADER];
    const key = req.headers[INTERNAL_KEY_HEADER];
    if (typeof header !== 'string' || !internalKeyMatches(typeof key === 'string' ? key : undefined, options.internalApiKey)) {
      next();
      return;
    }
    await awaitApplied(options.db, options.consumer, eventsToAwait(header, options.topics), maxWaitMs);
    next();
  };
}
