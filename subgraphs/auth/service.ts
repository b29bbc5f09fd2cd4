/**
 * Accounts and sessions: registration with its compensating delete, login, refresh-token rotation
 * with reuse detection, logout, and the effects of a deleted profile.
 */
import { randomUUID } from 'node:crypto';
import bcrypt from 'bcrypt';
import { IsNull, LessThan, type EntityManager } from 'typeorm';
import type { Database } from '../../platform/database';
import { isUniqueViolation } from '../../platform/database';
import type { Logger } from '../../platform/logger';
import type { Role } from '../../rest-compat/auth';
import { AppError, conflict } from '../../rest-compat/errors';
import type { CreateUserProfileRequest } from '../user/dto';
import type { LoginRequestDto, LoginResponseDto, RegisterRequestDto, RegisterResponseDto } from './dto';
import { Account, RefreshToken, Session } from './entities';
import type { SigningKey } from './keys';
import { hashRefreshToken, newRefreshToken, signAccessToken, type TokenSettings } from './tokens';

export const BCRYPT_COST = 10;
/** A PENDING account older than this was left by a crash mid-registration and may be replaced. */
const STALE_PENDING_MS = 60_000;

const invalidCredentials = () => new AppError('INVALID_CREDENTIALS', 'Invalid email or password.', 401);
const invalidRefreshToken = () => new AppError('INVALID_REFRESH_TOKEN', 'Refresh token is invalid, expired or revoked', 401);

export interface ProfileDirectory {
  /** Creates the profile in the user service; rejects with a 503 AppError when it cannot. */
  createProfile(request: CreateUserProfileRequest): Promise<void>;
}

export interface AuthSettings extends TokenSettings {
  refreshTokenTtlMs: number;
}

export class AuthService {
  /** Compared against when the email is unknown, so both failures take the same time. */
  private readonly dummyHash = bcrypt.hashSync(randomUUID(), BCRYPT_COST);

  constructor(
    private readonly db: Database,
    private readonly key: SigningKey,
    private readonly settings: AuthSettings,
    private readonly profiles: ProfileDirectory,
    private readonly logger: Logger,
  ) {}

  async register(request: RegisterRequestDto, role: Role = 'USER'): Promise<RegisterResponseDto> {
    const email = request.email.trim().toLowerCase();
    const now = new Date();
    const account: Account = Object.assign(new Account(), {
      id: randomUUID(),
      email,
      passwordHash: await bcrypt.hash(request.password, BCRYPT_COST),
      role,
      status: 'PENDING',
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.db.transaction(async (manager) => {
        await manager.delete(Account, { email, status: 'PENDING', createdAt: LessThan(new Date(now.getTime() - STALE_PENDING_MS)) });
        await manager.insert(Account, account);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`A user with email ${email} already exists`, 'DUPLICATE_EMAIL');
      throw error;
    }
    try {
      await this.profiles.createProfile({ ...request, userId: account.id, email });
    } catch (error) {
      // No half-made account: without its profile the account is removed again.
      await this.db.transaction((manager) => manager.delete(Account, { id: account.id }));
      throw error;
    }
    await this.db.transaction((manager) => manager.update(Account, { id: account.id }, { status: 'ACTIVE', updatedAt: new Date() }));
    this.logger.info({ userId: account.id, role }, 'account registered');
    return { userId: account.id, email, message: 'User registered successfully' };
  }

  async login(request: LoginRequestDto, userAgentName: string): Promise<LoginResponseDto> {
    const email = request.email.trim().toLowerCase();
    const account = await this.db.manager.findOne(Account, { where: { email } });
    const matches = await bcrypt.compare(request.password, account?.passwordHash ?? this.dummyHash);
    if (!account || !matches || account.status !== 'ACTIVE') throw invalidCredentials();

    const refreshToken = newRefreshToken();
    await this.db.transaction(async (manager) => {
      // A new login from the same device replaces that device's earlier session.
      await manager.update(Session, { userId: account.id, deviceId: request.deviceId, revokedAt: IsNull() }, { revokedAt: new Date(), revokeReason: 'DEVICE_RELOGIN' });
      const session = Object.assign(new Session(), {
        id: randomUUID(),
        userId: account.id,
        deviceId: request.deviceId,
        deviceName: userAgentName,
        createdAt: new Date(),
        revokedAt: null,
        revokeReason: null,
      });
      await manager.insert(Session, session);
      await this.storeRefreshToken(manager, session.id, refreshToken);
    });
    return this.tokens(account, refreshToken);
  }

  async refresh(presented: string): Promise<LoginResponseDto> {
    const tokenHash = hashRefreshToken(presented);
    const outcome = await this.db.transaction(async (manager) => {
      const token = await manager.findOne(RefreshToken, { where: { tokenHash } });
      if (!token) return { ok: false as const };
      const session = await manager.findOne(Session, { where: { id: token.sessionId } });
      if (!session || session.revokedAt) return { ok: false as const };
      const now = new Date();
      if (token.expiresAt.getTime() <= now.getTime()) return { ok: false as const };
      // A rotated-out token presented again means it leaked: the whole session ends.
      const rotated = token.rotatedAt === null && (await manager.update(RefreshToken, { tokenHash, rotatedAt: IsNull() }, { rotatedAt: now })).affected === 1;
      if (!rotated) {
        await manager.update(Session, { id: session.id }, { revokedAt: now, revokeReason: 'REFRESH_TOKEN_REUSE' });
        this.logger.warn({ sessionId: session.id, userId: session.userId }, 'refresh token reuse; session revoked');
        return { ok: false as const };
      }
      const account = await manager.findOne(Account, { where: { id: session.userId } });
      if (!account || account.status !== 'ACTIVE') return { ok: false as const };
      const next = newRefreshToken();
      await this.storeRefreshToken(manager, session.id, next);
      return { ok: true as const, account, next };
    });
    if (!outcome.ok) throw invalidRefreshToken();
    return this.tokens(outcome.account, outcome.next);
  }

  /** Revokes the one session the token belongs to; unknown or revoked tokens change nothing. */
  async logout(presented: string): Promise<void> {
    const token = await this.db.manager.findOne(RefreshToken, { where: { tokenHash: hashRefreshToken(presented) } });
    if (!token) return;
    await this.db.transaction((manager) => manager.update(Session, { id: token.sessionId, revokedAt: IsNull() }, { revokedAt: new Date(), revokeReason: 'LOGOUT' }));
  }

  async logoutAll(userId: string): Promise<void> {
    await this.db.transaction((manager) => manager.update(Session, { userId, revokedAt: IsNull() }, { revokedAt: new Date(), revokeReason: 'LOGOUT_ALL' }));
  }

  /** The profile is gone: the account can no longer log in and its sessions end. */
  async removeAccount(manager: EntityManager, userId: string): Promise<void> {
    await manager.update(Session, { userId, revokedAt: IsNull() }, { revokedAt: new Date(), revokeReason: 'USER_DELETED' });
    await manager.delete(Account, { id: userId });
    this.logger.info({ userId }, 'account removed after its profile was deleted');
  }

  /** Creates the configured ADMIN once; a no-op when an account with that email exists. */
  async ensureAdmin(email: string, password: string): Promise<boolean> {
    const existing = await this.db.manager.findOne(Account, { where: { email: email.trim().toLowerCase() } });
    if (existing?.status === 'ACTIVE') return false;
    const profile = { firstName: 'Store', lastName: 'Admin', phoneNumber: '+10000000000', dateOfBirth: '1970-01-01', address: 'Bookstore HQ' };
    await this.register({ email, password, ...profile }, 'ADMIN');
    return true;
  }

  private async storeRefreshToken(manager: EntityManager, sessionId: string, token: string): Promise<void> {
    const now = new Date();
    await manager.insert(RefreshToken, {
      tokenHash: hashRefreshToken(token),
      sessionId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.settings.refreshTokenTtlMs),
      rotatedAt: null,
    });
  }

  private async tokens(account: Account, refreshToken: string): Promise<LoginResponseDto> {
    const accessToken = await signAccessToken(this.key, this.settings, { userId: account.id, role: account.role, email: account.email });
    return { accessToken, refreshToken, expiresIn: this.settings.accessTokenTtlMs };
  }
}
