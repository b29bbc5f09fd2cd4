/**
 * The auth service's tables: accounts (login identity and password hash), device sessions, and
 * refresh tokens stored only as SHA-256 hashes, each remembering whether it was rotated out.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Role } from '../../rest-compat/auth';

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

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
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

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
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

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt!: Date;

  @Column({ name: 'rotated_at', type: 'datetime', precision: 3, nullable: true })
  rotatedAt!: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
