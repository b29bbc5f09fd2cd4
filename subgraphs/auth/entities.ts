/**
 * The auth service's tables: accounts (login identity and password hash), device sessions, and
 * refresh tokens stored only as SHA-256 hashes, each remembering whether it was rotated out, the
 * registrations removed before they completed, and the single-use tokens sent by e-mail. (The per-account login throttle counts in the shared
 * rate-limit table: platform/rate-limit-store.ts.)
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Role } from '../../platform/auth';
import { TimestampColumn } from '../../platform/database';

/** PENDING until the user service holds the profile; only ACTIVE accounts can log in. */
export type AccountStatus = 'PENDING' | 'ACTIVE';

@Entity({ name: 'auth_accounts' })
export class Account {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'varchar', length: 100, unique: true })
  email!: string;

  @Column({ name: 'password_hash', type: 'varchar', length: 100 })
  passwordHash!: string;

  @Column({ type: 'varchar', length: 10 })
  role!: Role;

  @Column({ type: 'varchar', length: 10 })
  status!: AccountStatus;

  /** When the owner proved the address theirs (a verification link, or a password reset through it); null until then. */
  @TimestampColumn('email_verified_at', { nullable: true })
  emailVerifiedAt!: Date | null;

  @TimestampColumn('created_at')
  createdAt!: Date;

  @TimestampColumn('updated_at')
  updatedAt!: Date;
}

@Entity({ name: 'auth_sessions' })
export class Session {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'user_id', type: 'varchar', length: 36 })
  userId!: string;

  @Column({ name: 'device_id', type: 'varchar', length: 64 })
  deviceId!: string;

  @Column({ name: 'device_name', type: 'varchar', length: 120 })
  deviceName!: string;

  @TimestampColumn('created_at')
  createdAt!: Date;

  /** The last login or refresh of the session. */
  @TimestampColumn('last_used_at', { nullable: true })
  lastUsedAt!: Date | null;

  @TimestampColumn('revoked_at', { nullable: true })
  revokedAt!: Date | null;

  @Column({ name: 'revoke_reason', type: 'varchar', length: 30, nullable: true })
  revokeReason!: string | null;
}

@Entity({ name: 'auth_refresh_tokens' })
export class RefreshToken {
  @PrimaryColumn({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash!: string;

  @Column({ name: 'session_id', type: 'varchar', length: 36 })
  sessionId!: string;

  @TimestampColumn('expires_at')
  expiresAt!: Date;

  @TimestampColumn('rotated_at', { nullable: true })
  rotatedAt!: Date | null;

  @TimestampColumn('created_at')
  createdAt!: Date;
}

/**
 * A registration removed again before it completed (the profile call failed, or a crash left it
 * PENDING). Its profile may have been committed all the same; since an account id is never reused,
 * such a profile belongs to no account, and a later registration of the email may replace it.
 */
@Entity({ name: 'auth_abandoned_registrations' })
export class AbandonedRegistration {
  @PrimaryColumn({ name: 'user_id', type: 'varchar', length: 36 })
  userId!: string;

  @Column({ type: 'varchar', length: 100 })
  email!: string;

  @TimestampColumn('abandoned_at')
  abandonedAt!: Date;
}

/** What an account token lets its holder do once. */
export type AccountTokenPurpose = 'PASSWORD_RESET' | 'EMAIL_VERIFICATION';

/**
 * A single-use token sent by e-mail (a password reset, an address verification), stored only as its
 * SHA-256 hash: whoever reads the table cannot use it.
 */
@Entity({ name: 'auth_account_tokens' })
export class AccountToken {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'token_hash', type: 'varchar', length: 64, unique: true })
  tokenHash!: string;

  @Column({ name: 'user_id', type: 'varchar', length: 36 })
  userId!: string;

  @Column({ type: 'varchar', length: 20 })
  purpose!: AccountTokenPurpose;

  /**
   * When the e-mail carrying it was asked for. Each attempt at sending that e-mail makes a token of
   * its own, so several may share it; a newer request's token ends theirs.
   */
  @TimestampColumn('requested_at')
  requestedAt!: Date;

  @TimestampColumn('expires_at')
  expiresAt!: Date;

  /** Set when the token (or another of its purpose) is used, or a newer request replaces it. */
  @TimestampColumn('used_at', { nullable: true })
  usedAt!: Date | null;

  @TimestampColumn('created_at')
  createdAt!: Date;
}
