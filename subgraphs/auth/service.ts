/**
 * Accounts and sessions: registration with its compensating delete, login (behind the per-account
 * throttle), refresh-token rotation with reuse detection and its 10-second grace window, logout,
 * and the effects of a deleted profile. Every session that ends is announced (`sessions-revoked`).
 */
import { randomUUID } from 'node:crypto';
import bcrypt from 'bcrypt';
import { IsNull, LessThan, type EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import { forUpdate, isUniqueViolation } from '../../platform/database';
import type { Logger } from '../../platform/logger';
import type { Role } from '../../platform/auth';
import { AppError, conflict } from '../../platform/errors';
import { MAX_REPLACED_PROFILES, type CreateUserProfileRequest } from '../../platform/contracts/profiles';
import { storedKey } from '../../platform/validation';
import type { LoginRequestDto, LoginResponseDto, RegisterRequestDto, RegisterResponseDto } from './dto';
import { AbandonedRegistration, Account, RefreshToken, Session } from './entities';
import { publishEmailVerified } from './events';
import type { SigningKey } from './keys';
import type { LoginThrottle } from './login-throttle';
import { revokeSessions } from './sessions';
import { hashSecretToken, newSecretToken, signAccessToken, type TokenSettings } from './tokens';

export const BCRYPT_COST = 10;
/** A PENDING account older than this was left by a crash mid-registration and may be replaced. */
const STALE_PENDING_MS = 60_000;

/**
 * Removes an account whose registration did not complete and records its id, in one transaction, so
 * the next registration of the email may replace a profile left under it. Only the transaction that
 * removed the row records it (two registrations may both find a stale PENDING account).
 */
async function abandonRegistration(manager: EntityManager, account: Pick<Account, 'id' | 'email'>): Promise<void> {
  const removed = await manager.delete(Account, { id: account.id, status: 'PENDING' });
  if (removed.affected !== 1) return;
  await manager.insert(AbandonedRegistration, { userId: account.id, email: account.email, abandonedAt: new Date() });
}

const invalidCredentials = () => new AppError('INVALID_CREDENTIALS', 'Invalid email or password.', 401);
const invalidRefreshToken = () => new AppError('INVALID_REFRESH_TOKEN', 'Refresh token is invalid, expired or revoked', 401);

/** What registration records beside the account it activates: the verification e-mail. */
export interface VerificationMail {
  recordVerification(manager: EntityManager, account: Pick<Account, 'id' | 'email'>): Promise<void>;
  /** Sends what was recorded without waiting for the next poll. */
  wake(): void;
}

export interface ProfileDirectory {
  /** Creates the profile in the user service; rejects with a 503 AppError when it cannot. */
  createProfile(request: CreateUserProfileRequest): Promise<void>;
}

export interface AuthSettings extends TokenSettings {
  refreshTokenTtlMs: number;
  /**
   * A rotated-out refresh token presented again within this long of its rotation is refused without
   * ending the session: two tabs refreshing at once, not a stolen token (CONTRACT §2: 10 s).
   */
  refreshGraceMs: number;
}

export class AuthService {
  /** Compared against when the email is unknown, so both failures take the same time. */
  private readonly dummyHash = bcrypt.hashSync(randomUUID(), BCRYPT_COST);

  constructor(
    private readonly db: Database,
    private readonly key: SigningKey,
    private readonly settings: AuthSettings,
    private readonly profiles: ProfileDirectory,
    private readonly throttle: LoginThrottle,
    private readonly verification: VerificationMail,
    private readonly logger: Logger,
  ) {}

  async register(request: RegisterRequestDto, role: Role = 'USER'): Promise<RegisterResponseDto> {
    const email = storedKey(request.email);
    const now = new Date();
    const account: Account = Object.assign(new Account(), {
      id: randomUUID(),
      email,
      passwordHash: await bcrypt.hash(request.password, BCRYPT_COST),
      role,
      status: 'PENDING',
      emailVerifiedAt: null,
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.db.transaction(async (manager) => {
        const stale = await manager.find(Account, { where: { email, status: 'PENDING', createdAt: LessThan(new Date(now.getTime() - STALE_PENDING_MS)) } });
        for (const pending of stale) await abandonRegistration(manager, pending);
        await manager.insert(Account, account);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`A user with email ${email} already exists`, 'DUPLICATE_EMAIL');
      throw error;
    }
    // Registrations of this email abandoned earlier may have left profiles (only their answers were
    // lost); now that this account holds the email, those profiles belong to no account.
    const abandoned = await this.db.manager.find(AbandonedRegistration, { where: { email }, order: { abandonedAt: 'DESC' }, take: MAX_REPLACED_PROFILES });
    try {
      await this.profiles.createProfile({ ...request, userId: account.id, email, replacesUserIds: abandoned.map((entry) => entry.userId) });
    } catch (error) {
      // No half-made account: without its profile the account is removed again, and remembered, since
      // the user service may have committed the profile and only its answer was lost.
      await this.db.transaction((manager) => abandonRegistration(manager, account));
      throw error;
    }
    // The configured admin's address is the operator's word; every other one is proved by its link.
    await this.db.transaction(async (manager) => {
      const activated = new Date();
      await manager.update(Account, { id: account.id }, { status: 'ACTIVE', updatedAt: activated, emailVerifiedAt: role === 'ADMIN' ? activated : null });
      if (role === 'ADMIN') await publishEmailVerified(manager, account.id, activated);
      else await this.verification.recordVerification(manager, account);
    });
    this.verification.wake();
    this.logger.info({ userId: account.id, role }, 'account registered');
    return { userId: account.id, email, message: 'User registered successfully' };
  }

  async login(request: LoginRequestDto, userAgentName: string): Promise<LoginResponseDto> {
    const email = storedKey(request.email);
    // The throttle counts the failures and has each login wait its turn behind those in flight.
    const account = await this.throttle.judge(email, async () => {
      const found = await this.db.manager.findOne(Account, { where: { email } });
      const matches = await bcrypt.compare(request.password, found?.passwordHash ?? this.dummyHash);
      return found && matches && found.status === 'ACTIVE' ? found : undefined;
    });
    if (!account) throw invalidCredentials();

    const refreshToken = newSecretToken();
    const now = new Date();
    const session = Object.assign(new Session(), {
      id: randomUUID(),
      userId: account.id,
      deviceId: request.deviceId,
      deviceName: userAgentName,
      createdAt: now,
      lastUsedAt: now,
      revokedAt: null,
      revokeReason: null,
    });
    await this.db.transaction(async (manager) => {
      // Logins of one account take turns on its row (MySQL; SQLite runs one write transaction at a
      // time anyway), so concurrent logins from one device each see, and end, the session before.
      await manager.findOne(Account, { where: { id: account.id }, ...forUpdate(this.db) });
      // A new login from the same device replaces that device's earlier session.
      await revokeSessions(manager, { userId: account.id, deviceId: request.deviceId }, 'DEVICE_RELOGIN');
      await manager.insert(Session, session);
      await this.storeRefreshToken(manager, session.id, refreshToken);
    });
    return this.tokens(account, session.id, refreshToken);
  }

  async refresh(presented: string): Promise<LoginResponseDto> {
    const tokenHash = hashSecretToken(presented);
    const outcome = await this.db.transaction(async (manager) => {
      const refused = { ok: false as const };
      const token = await manager.findOne(RefreshToken, { where: { tokenHash } });
      if (!token) return refused;
      const session = await manager.findOne(Session, { where: { id: token.sessionId } });
      if (!session || session.revokedAt) return refused;
      const now = new Date();
      if (token.expiresAt.getTime() <= now.getTime()) return refused;
      const rotated = token.rotatedAt === null && (await manager.update(RefreshToken, { tokenHash, rotatedAt: IsNull() }, { rotatedAt: now })).affected === 1;
      if (!rotated) {
        // Rotated a moment ago (or by a request racing this one): another tab won; nothing ends.
        if (now.getTime() - (token.rotatedAt ?? now).getTime() < this.settings.refreshGraceMs) return refused;
        // A rotated-out token presented again later means it leaked: the whole session ends.
        await revokeSessions(manager, { userId: session.userId, id: session.id }, 'REFRESH_TOKEN_REUSE');
        this.logger.warn({ sessionId: session.id, userId: session.userId }, 'refresh token reuse; session revoked');
        return refused;
      }
      const account = await manager.findOne(Account, { where: { id: session.userId } });
      if (!account || account.status !== 'ACTIVE') return refused;
      await manager.update(Session, { id: session.id }, { lastUsedAt: now });
      const next = newSecretToken();
      await this.storeRefreshToken(manager, session.id, next);
      return { ok: true as const, account, sessionId: session.id, next };
    });
    if (!outcome.ok) throw invalidRefreshToken();
    return this.tokens(outcome.account, outcome.sessionId, outcome.next);
  }

  /** Revokes the one session the token belongs to; unknown or revoked tokens change nothing. */
  async logout(presented: string): Promise<void> {
    const token = await this.db.manager.findOne(RefreshToken, { where: { tokenHash: hashSecretToken(presented) } });
    if (!token) return;
    const session = await this.db.manager.findOne(Session, { where: { id: token.sessionId }, select: { id: true, userId: true } });
    if (!session) return;
    await this.db.transaction((manager) => revokeSessions(manager, { userId: session.userId, id: session.id }, 'LOGOUT'));
  }

  /** The profile is gone: the account can no longer log in, and every token of the user is refused from now on. */
  async removeAccount(manager: EntityManager, userId: string): Promise<void> {
    await revokeSessions(manager, { userId }, 'USER_DELETED', { everySession: true });
    await manager.delete(Account, { id: userId });
    this.logger.info({ userId }, 'account removed after its profile was deleted');
  }

  /** Creates the configured ADMIN once; a no-op when an account with that email exists. */
  async ensureAdmin(email: string, password: string): Promise<boolean> {
    const existing = await this.db.manager.findOne(Account, { where: { email: storedKey(email) } });
    if (existing?.status === 'ACTIVE') return false;
    const profile = { firstName: 'Store', lastName: 'Admin', phoneNumber: '+10000000000', dateOfBirth: '1970-01-01', address: 'Bookstore HQ' };
    await this.register({ email, password, ...profile }, 'ADMIN');
    return true;
  }

  private async storeRefreshToken(manager: EntityManager, sessionId: string, token: string): Promise<void> {
    const now = new Date();
    await manager.insert(RefreshToken, {
      tokenHash: hashSecretToken(token),
      sessionId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.settings.refreshTokenTtlMs),
      rotatedAt: null,
    });
  }

  private tokens(account: Account, sessionId: string, refreshToken: string): LoginResponseDto {
    const accessToken = signAccessToken(this.key, this.settings, {
      userId: account.id,
      role: account.role,
      email: account.email,
      emailVerified: account.emailVerifiedAt !== null,
      sessionId,
    });
    return { accessToken, refreshToken, expiresIn: this.settings.accessTokenTtlMs };
  }
}
