/**
 * The user service's profile as other services send and read it: one definition of the fields and
 * their rules, shared by registration (auth service), the internal create call the auth service
 * makes, the profile update, and the profile the payment service reads for a checkout
 * (CONTRACT §2, §3, §5).
 */
import { IsEmail, IsString, Matches, MaxLength, ValidateBy, buildMessage, IsUUID } from 'class-validator';
import { isIsoDate } from '../validation';

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
  @MaxLength(100)
  email!: string;
}

export class CreateUserProfileRequest extends EmailField {
  @IsUUID('all', { message: 'must be a UUID' })
  userId!: string;
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
  createdAt: string;
  updatedAt: string;
}
