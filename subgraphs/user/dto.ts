/**
 * The profile's fields and their rules (CONTRACT §2): one definition shared by registration
 * (auth service), the internal create call and the profile update.
 */
import { IsEmail, IsOptional, IsString, Matches, MaxLength, ValidateBy, buildMessage, IsUUID } from 'class-validator';
import { isIsoDate } from '../../rest-compat/validation';

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

export class UserRequestDto extends ProfileFieldsDto {
  @IsOptional()
  @IsString()
  @IsEmail({}, { message: 'must be a well-formed email address' })
  email?: string;
}

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

