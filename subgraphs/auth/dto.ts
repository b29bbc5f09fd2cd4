/** Request and response shapes of the auth routes (interface §2.2-§2.6, CONTRACT §2). */
import { Transform } from 'class-transformer';
import { IsString, Matches, MaxLength, MinLength, ValidateBy } from 'class-validator';
import { EmailField } from '../../platform/contracts/profiles';
import { MaxStoredLength } from '../../platform/validation';

/** bcrypt reads only the first 72 bytes of a password; a longer one would be cut without a word. */
export const PASSWORD_MAX_BYTES = 72;

function MaxUtf8Bytes(max: number): PropertyDecorator {
  return ValidateBy({
    name: 'maxUtf8Bytes',
    validator: {
      validate: (value) => typeof value === 'string' && Buffer.byteLength(value, 'utf8') <= max,
      defaultMessage: () => `must be at most ${max} bytes in UTF-8`,
    },
  });
}

/** The registration password policy, which a password reset follows too. */
function PasswordPolicy(): PropertyDecorator {
  const rules = [
    IsString(),
    MinLength(8),
    MaxUtf8Bytes(PASSWORD_MAX_BYTES),
    Matches(/[A-Za-z]/, { message: 'must contain at least one letter' }),
    Matches(/\d/, { message: 'must contain at least one digit' }),
  ];
  return (target, property) => rules.forEach((rule) => rule(target, property));
}

export class RegisterRequestDto extends EmailField {
  @PasswordPolicy()
  password!: string;
}

/**
 * `POST /auth/password/forgot` (CONTRACT §11); the address is not checked beyond its length as
 * stored (the mail outbox keeps it lower-cased), so the answer says nothing about it.
 */
export class ForgotPasswordRequestDto {
  @IsString()
  @MinLength(1, { message: 'must not be blank' })
  @MaxStoredLength(254)
  email!: string;
}

/** An e-mailed token as presented: 256 random bits in base64url. */
function EmailedToken(): PropertyDecorator {
  const rules = [IsString(), MinLength(1, { message: 'must not be blank' }), MaxLength(200)];
  return (target, property) => rules.forEach((rule) => rule(target, property));
}

export class ResetPasswordRequestDto {
  @EmailedToken()
  token!: string;

  @PasswordPolicy()
  password!: string;
}

export class VerifyEmailRequestDto {
  @EmailedToken()
  token!: string;
}

export class LoginRequestDto {
  /**
   * Looked up lower-cased. One that is longer than any stored email once lower-cased is a 400, like
   * one too long as sent (CONTRACT §1.2: limits apply to the value as stored), rather than the 401 of
   * an unknown account: no account can have it, its length tells nothing about who is registered,
   * and it never reaches the lookup or the per-account throttle.
   */
  @IsString()
  @MinLength(1, { message: 'must not be blank' })
  @MaxStoredLength(100)
  email!: string;

  @IsString()
  @MinLength(1, { message: 'must not be blank' })
  @MaxLength(100)
  password!: string;

  /** Trimmed before it is checked and stored. */
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @MinLength(1, { message: 'must not be blank' })
  @MaxLength(64)
  deviceId!: string;
}

export class RefreshTokenRequestDto {
  @IsString()
  @MinLength(1, { message: 'must not be blank' })
  @MaxLength(200)
  refreshToken!: string;
}

export interface RegisterResponseDto {
  userId: string;
  email: string;
  message: string;
}

export interface LoginResponseDto {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}
