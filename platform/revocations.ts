/**
 * The sessions a token verifier refuses: what `sessions-revoked` announced, each kept until the
 * access tokens issued before its revocation would have expired anyway, then forgotten.
 *
 * Every verifying process follows the topic in a consumer group of its own
 * (`token-verifier.<service>.<random>`), so each replica hears every revocation. What it missed
 * before it started, it loads from the auth service (`GET /auth/internal/revoked-sessions`, with
 * X-Internal-Api-Key: the sessions revoked within an access token's lifetime); until that first
 * load succeeds it answers 503 rather than accept a token it cannot check, as it does while it
 * cannot fetch the JWKS. The new group also reads the topic from its beginning, which covers a
 * revocation made between the load and the subscription; announcements older than a token's
 * lifetime are skipped unvalidated.
 */
import { randomUUID } from 'node:crypto';
import type { RevokedSessionDto } from './contracts/sessions';
import type { EventBus, Subscription } from './events/bus';
import { parseEvent, PoisonMessageError } from './events/consumer';
import { SessionsRevokedEvent, TOPICS } from './events/topics';
import type { Logger } from './logger';
import { serviceUnavailable } from './errors';

export class RevokedSessions {
  /** sessionId → when to forget it (ms). */
  private readonly sessions = new Map<string, number>();
  /** userId → every token of the user issued up to `before` is refused, until `forgetAt`. */
  private readonly users = new Map<string, { before: number; forgetAt: number }>();
  private nextPrune = 0;

  /** @param keepMs how long a revoked session's tokens could still be presented: the access-token lifetime plus clock tolerance. */
  constructor(private readonly keepMs: number) {}

  /** True when the announcement is too old to matter: every token it could refuse has expired. */
  expired(revokedAtMs: number, now = Date.now()): boolean {
    return revokedAtMs + this.keepMs <= now;
  }

  record(userId: string, sessionIds: readonly string[], revokedAtMs: number): void {
    const forgetAt = revokedAtMs + this.keepMs;
    if (this.expired(revokedAtMs)) return;
    if (sessionIds.length === 0) {
      const known = this.users.get(userId);
      if (!known || known.before < revokedAtMs) this.users.set(userId, { before: revokedAtMs, forgetAt });
    }
    for (const sessionId of sessionIds) this.sessions.set(sessionId.toLowerCase(), Math.max(forgetAt, this.sessions.get(sessionId.toLowerCase()) ?? 0));
    this.prune();
  }

  has(principal: { userId: string; sessionId: string }, issuedAtMs: number): boolean {
    this.prune();
    if (this.sessions.has(principal.sessionId.toLowerCase())) return true;
    const user = this.users.get(principal.userId.toLowerCase());
    return user !== undefined && issuedAtMs <= user.before;
  }

  /** At most once a second, drops what can no longer refuse anything. */
  private prune(now = Date.now()): void {
    if (now < this.nextPrune) return;
    this.nextPrune = now + 1000;
    for (const [id, forgetAt] of this.sessions) if (forgetAt <= now) this.sessions.delete(id);
    for (const [id, user] of this.users) if (user.forgetAt <= now) this.users.delete(id);
  }
}

export interface RevocationFeedOptions {
  bus: EventBus;
  logger: Logger;
  /** Names the consumer group. */
  service: string;
  /** The auth service's list of recently revoked sessions (read at each attempt). */
  listUrl: () => string;
  internalApiKey: string;
}

const LOAD_TIMEOUT_MS = 3000;
/** How long a verification waits for the first load before answering 503. */
const FIRST_LOAD_WAIT_MS = 3000;
const LOAD_RETRY_MS = { initial: 250, max: 2000 };

/** A verifier's revoked sessions, fed by the topic and, at start, by the auth service's list. */
export class RevocationFeed {
  private loaded = false;
  private stopped = false;
  private markLoaded!: () => void;
  private readonly firstLoad = new Promise<void>((resolve) => {
    this.markLoaded = resolve;
  });

  constructor(
    readonly revoked: RevokedSessions,
    private readonly options: RevocationFeedOptions,
  ) {}

  /** Subscribes to `sessions-revoked`, then loads the recent revocations in the background until that succeeds. */
  async follow(): Promise<Subscription> {
    const subscription = await followRevocations(this.options, this.revoked);
    void this.loadUntilDone();
    return {
      stop: async () => {
        this.stopped = true;
        await subscription.stop();
      },
    };
  }

  /** Whether the token's session was revoked; 503 while what was revoked before this process started is unknown. */
  async has(principal: { userId: string; sessionId: string }, issuedAtMs: number): Promise<boolean> {
    if (!this.loaded) {
      await Promise.race([this.firstLoad, new Promise((resolve) => setTimeout(resolve, FIRST_LOAD_WAIT_MS).unref())]);
      if (!this.loaded) throw serviceUnavailable('Authentication service is unavailable', 'AUTH_UNAVAILABLE');
    }
    return this.revoked.has(principal, issuedAtMs);
  }

  private async loadUntilDone(): Promise<void> {
    for (let attempt = 1, delay = LOAD_RETRY_MS.initial; !this.stopped; attempt += 1, delay = Math.min(delay * 2, LOAD_RETRY_MS.max)) {
      try {
        await this.load();
        this.loaded = true;
        this.markLoaded();
        return;
      } catch (error) {
        // The auth service may simply start after this one; say so only once it takes a while.
        const log = attempt >= 5 ? this.options.logger.warn.bind(this.options.logger) : this.options.logger.debug.bind(this.options.logger);
        log({ err: error, attempt, retryInMs: delay }, 'revoked sessions not loaded from the auth service yet');
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  }

  private async load(): Promise<void> {
    const res = await fetch(this.options.listUrl(), {
      headers: { 'x-internal-api-key': this.options.internalApiKey, accept: 'application/json' },
      signal: AbortSignal.timeout(LOAD_TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`the auth service answered ${res.status}`);
    const list: unknown = await res.json();
    if (!Array.isArray(list)) throw new Error('the auth service did not answer a list');
    for (const entry of list as Partial<Record<keyof RevokedSessionDto, unknown>>[]) {
      const revokedAt = typeof entry.revokedAt === 'string' ? Date.parse(entry.revokedAt) : Number.NaN;
      if (typeof entry.sessionId !== 'string' || typeof entry.userId !== 'string' || !Number.isFinite(revokedAt)) continue;
      this.revoked.record(entry.userId.toLowerCase(), [entry.sessionId], revokedAt);
    }
  }
}

/** Subscribes this process to `sessions-revoked`, from the topic's beginning, into `revoked`. */
function followRevocations(options: Pick<RevocationFeedOptions, 'bus' | 'logger' | 'service'>, revoked: RevokedSessions): Promise<Subscription> {
  const { bus, logger } = options;
  return bus.subscribe({
    groupId: `token-verifier.${options.service}.${randomUUID()}`,
    topics: [TOPICS.sessionsRevoked],
    handle: async (message) => {
      const occurredAt = Date.parse((safeJson(message.value) as { occurredAt?: unknown } | undefined)?.occurredAt as string);
      if (Number.isFinite(occurredAt) && revoked.expired(occurredAt)) return;
      try {
        const event = await parseEvent(SessionsRevokedEvent, message.value);
        revoked.record(event.userId.toLowerCase(), event.sessionIds, Date.parse(event.occurredAt));
      } catch (error) {
        // Skipped, not dead-lettered: every verifying process reads this topic, and each would copy it there.
        if (!(error instanceof PoisonMessageError)) throw error;
        logger.warn({ topic: message.topic, offset: message.offset, reason: error.message }, 'unreadable sessions-revoked message skipped');
      }
    },
  });
}

function safeJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
