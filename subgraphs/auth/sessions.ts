/**
 * Device sessions as their owner (and an ADMIN) sees them, and every way a session ends. Ending
 * sessions and announcing it are one transaction: the `sessions-revoked` event goes into the outbox
 * beside the update, so every token verifier hears of it (CONTRACT §2, §7).
 */
import { In, IsNull, MoreThan, MoreThanOrEqual, type EntityManager, type FindOptionsWhere } from 'typeorm';
import type { RevokedSessionDto } from '../../platform/contracts/sessions';
import type { Database } from '../../platform/database';
import { isSelfOrAdmin, type Principal } from '../../platform/auth';
import { AppError, contractTimestamp, forbidden, notFound } from '../../platform/errors';
import { Account, Session } from './entities';
import { publishSessionsRevoked } from './events';

export type RevokeReason = 'LOGOUT' | 'LOGOUT_ALL' | 'REFRESH_TOKEN_REUSE' | 'DEVICE_RELOGIN' | 'ENDED' | 'ENDED_BY_ADMIN' | 'USER_DELETED' | 'PASSWORD_RESET';

export interface SessionView {
  sessionId: string;
  deviceId: string;
  deviceName: string;
  /** ISO-8601 in UTC without zone. */
  createdAt: string;
  lastUsedAt: string;
  /** True for the session of the token the caller presented. */
  current: boolean;
}

const sessionNotFound = (sessionId: string) => notFound(`Session not found: ${sessionId}`, 'SESSION_NOT_FOUND');

/**
 * Ends the caller-chosen sessions still active and records `sessions-revoked` for them. With
 * `everySession`, the event names no session: every token of the user issued until now is refused
 * (a deleted user), whatever session it came from.
 */
export async function revokeSessions(
  manager: EntityManager,
  where: FindOptionsWhere<Session> & { userId: string },
  reason: RevokeReason,
  options: { everySession?: boolean } = {},
): Promise<string[]> {
  const now = new Date();
  const active = await manager.find(Session, { where: { ...where, revokedAt: IsNull() }, select: { id: true } });
  const ids = active.map((session) => session.id);
  if (ids.length > 0) await manager.update(Session, { id: In(ids), revokedAt: IsNull() }, { revokedAt: now, revokeReason: reason });
  if (ids.length > 0 || options.everySession) await publishSessionsRevoked(manager, where.userId, options.everySession ? [] : ids, now);
  return ids;
}

export class SessionDirectory {
  constructor(
    private readonly db: Database,
    /** Sessions unused this long have no live refresh token left. */
    private readonly refreshTokenTtlMs: number,
  ) {}

  /** The user's active sessions, most recently used first; `currentSessionId` marks the caller's own. */
  async list(userId: string, currentSessionId: string | null): Promise<SessionView[]> {
    const sessions = await this.db.manager.find(Session, {
      where: { userId, revokedAt: IsNull(), lastUsedAt: MoreThan(new Date(Date.now() - this.refreshTokenTtlMs)) },
      order: { lastUsedAt: 'DESC', createdAt: 'DESC', id: 'ASC' },
    });
    return sessions.map((session) => ({
      sessionId: session.id,
      deviceId: session.deviceId,
      deviceName: session.deviceName,
      createdAt: contractTimestamp(session.createdAt),
      lastUsedAt: contractTimestamp(session.lastUsedAt ?? session.createdAt),
      current: session.id === currentSessionId,
    }));
  }

  /** The caller's sessions (`GET /auth/sessions`, `mySessions`). */
  mine(principal: Principal): Promise<SessionView[]> {
    return this.list(principal.userId, principal.sessionId);
  }

  /** Another user's sessions: that user or an ADMIN (403 otherwise; 404 for an unknown user). */
  async ofUser(principal: Principal, userId: string): Promise<SessionView[]> {
    if (!isSelfOrAdmin(principal, userId)) throw forbidden();
    await this.requireAccount(userId);
    return this.list(userId, principal.userId === userId ? principal.sessionId : null);
  }

  /** Ends one of the caller's sessions; someone else's or an unknown or ended one is 404 alike. */
  async end(principal: Principal, sessionId: string): Promise<void> {
    const ended = await this.db.transaction((manager) => revokeSessions(manager, { userId: principal.userId, id: sessionId }, 'ENDED'));
    if (ended.length === 0) throw sessionNotFound(sessionId);
  }

  /** Ends every session of the user: the user (logout-all) or an ADMIN. Resolves with how many were active. */
  async endAll(principal: Principal, userId: string): Promise<number> {
    if (!isSelfOrAdmin(principal, userId)) throw forbidden();
    if (principal.userId !== userId) await this.requireAccount(userId);
    const reason = principal.userId === userId ? 'LOGOUT_ALL' : 'ENDED_BY_ADMIN';
    const ended = await this.db.transaction((manager) => revokeSessions(manager, { userId }, reason));
    return ended.length;
  }

  /**
   * Sessions revoked in the last `withinMs` (an access token's lifetime and the clock tolerance):
   * what a starting token verifier must refuse besides what `sessions-revoked` will tell it.
   */
  async recentlyRevoked(withinMs: number): Promise<RevokedSessionDto[]> {
    const rows = await this.db.manager.find(Session, {
      where: { revokedAt: MoreThanOrEqual(new Date(Date.now() - withinMs)) },
      select: { id: true, userId: true, revokedAt: true },
      order: { revokedAt: 'ASC', id: 'ASC' },
    });
    return rows.map((row) => ({ sessionId: row.id, userId: row.userId, revokedAt: (row.revokedAt as Date).toISOString() }));
  }

  /** Whether the session no longer accepts its tokens (ended, or unknown). */
  async revoked(sessionId: string): Promise<boolean> {
    const session = await this.db.manager.findOne(Session, { where: { id: sessionId }, select: { id: true, revokedAt: true } });
    return !session || session.revokedAt !== null;
  }

  private async requireAccount(userId: string): Promise<void> {
    if (!(await this.db.manager.exists(Account, { where: { id: userId } }))) throw new AppError('USER_NOT_FOUND', `User not found with id: ${userId}`, 404);
  }
}
