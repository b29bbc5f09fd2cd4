/**
 * The user service's profile as other services send and read it: one definition of the fields and
 * their rules, shared by registration (auth service), the internal create call the auth service
 * makes, the profile update, and the profile the payment service reads for a checkout
 * (CONTRACT §2, §3, §5).
 */
import { ArrayMaxSize, IsArray, IsEmail, IsOptional, IsString, Matches, MaxLength, ValidateBy, buildMessage, IsUUID } from 'class-validator';
import { MaxStoredLength, isIsoDate } from '../validation';

const NOT_BLANK = /\S/;

/** A real `yyyy-MM-dd` date strictly before today (UTC). */
export function IsPastDate(): PropertyDecorator {
  return ValidateBy({
    name: 'isPastDate',
    validator: {
      validate: (value: unknown) => isIsoDate(value) && value < new Date().toISOString().slice(0, 10),
      defaultMessage: buildMessage(() => 'must be a real date in yyyy-MM-dd form, in the past'),
    },
  });
}

export class ProfileFieldsDto {
  @IsString()
  @Matches(NOT_BLANK, { message: 'must not be blank' })
  @MaxLength(50)
  firstName!: string;

  @IsString()
  @Matches(NOT_BLANK, { message: 'must not be blank' })
  @MaxLength(50)
  lastName!: string;

  @IsString()
  @Matches(/^\+?\d{10,15}$/, { message: 'must be 10 to 15 digits with an optional leading +' })
  phoneNumber!: string;

  @IsString()
  @IsPastDate()
  dateOfBirth!: string;

  @IsString()
  @Matches(NOT_BLANK, { message: 'must not be blank' })
  @MaxLength(255)
  address!: string;
}

export class EmailField extends ProfileFieldsDto {
  @IsString()
  @IsEmail({}, { message: 'must be a well-formed email address' })
  // Stored lower-cased in a 100-character column, by the auth and the user service alike.
  @MaxStoredLength(100)
  email!: string;
}

/** At most this many abandoned registrations are named in one create call (the newest). */
export const MAX_REPLACED_PROFILES = 100;

export class CreateUserProfileRequest extends EmailField {
  @IsUUID('all', { message: 'must be a UUID' })
  userId!: string;

  /**
   * The userIds of earlier registrations of this email that the auth service removed before they
   * completed: a profile of the same email under one of them belongs to no account and is replaced.
   */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_REPLACED_PROFILES)
  @IsUUID('all', { each: true, message: 'must be UUIDs' })
  replacesUserIds?: string[];
}

/** The profile as `GET /api/user/{userId}` answers it. */
export interface UserResponseDto {
  userId: string;
  firstName: string;
  lastName: string;
  email: string;
  phoneNumber: string;
  dateOfBirth: string;
  address: string;
  /** Whether the owner proved the address theirs (CONTRACT §11). */
  emailVerified: boolean;
  createdAt: string;
  updatedAt: string;
}
