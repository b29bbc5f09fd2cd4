/** Request and response shapes of the auth routes (interface §2.2-§2.6, CONTRACT §2). */
import { Transform } from 'class-transformer';
import { IsString, Length, Matches, MaxLength, MinLength } from 'class-validator';
import { EmailField } from '../user/dto';

export class RegisterRequestDto extends EmailField {
  @IsString()
  @Length(8, 100)
  @Matches(/[A-Za-z]/, { message: 'must contain at least one letter' })
  @Matches(/\d/, { message: 'must contain at least one digit' })
  password!: string;
}

export class LoginRequestDto {
  @IsString()
  @MinLength(1, { message: 'must not be blank' })
  @MaxLength(100)
  email!: string;

  @IsString()
  @MinLength(1, { message: 'must not be blank' })
  @MaxLength(100)
  password!: string;

  /** Trimmed before it is checked and stored. */
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
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
