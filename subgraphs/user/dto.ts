/**
 * What the user service's routes and resolvers parse: the profile update and the search keyword.
 * The profile fields other services send are in platform/contracts/profiles.ts.
 */
import { IsEmail, IsOptional, IsString } from 'class-validator';
import { ProfileFieldsDto } from '../../platform/contracts/profiles';
import { requireQueryString, validationError } from '../../platform/validation';

export class UserRequestDto extends ProfileFieldsDto {
  @IsOptional()
  @IsString()
  @IsEmail({}, { message: 'must be a well-formed email address' })
  email?: string;
}

/** The longest field a search looks in (email, 100 characters): a longer keyword matches nothing. */
export const MAX_KEYWORD_LENGTH = 100;

/** `keyword` of a profile search: not blank, and short enough to be a LIKE pattern every database takes. GraphQL's `searchUsers` uses it too. */
export function parseKeyword(value: unknown): string {
  const keyword = requireQueryString(value, 'keyword');
  if (keyword.length > MAX_KEYWORD_LENGTH) throw validationError(`keyword: must be shorter than or equal to ${MAX_KEYWORD_LENGTH} characters`);
  return keyword;
}
