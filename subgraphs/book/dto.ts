/**
 * A book's fields and their rules (CONTRACT §4), shared by create and the full update, and the
 * response shape. `parseBookRequest` adds the per-author checks class-validator cannot word as
 * `authors[1]: must not be blank`.
 */
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateBy } from 'class-validator';
import { AppError, validationFailed } from '../../rest-compat/errors';
import { isIsoDate, validateBody } from '../../rest-compat/validation';
import { isbnProblem, normalizeIsbn } from './isbn';
import { isLanguageCode } from './languages';
import { centsOfJsonNumber } from '../../platform/money';

/** DECIMAL(10,2): the largest price the column holds. */
export const MAX_CENTS = 99_999_999_99;

const NOT_BLANK = /\S/;
/* eslint-disable no-control-regex */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]*$/;
/* eslint-enable no-control-regex */

export const MAX_TITLE = 255;
export const MAX_AUTHOR = 255;
export const MAX_AUTHORS = 20;
export const MAX_DESCRIPTION = 10_000;
export const MAX_STOCK = 2_147_483_647;

/** Undefined when valid; a non-string is left to `@IsString`. */
function isbnMessage(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const problem = isbnProblem(normalizeIsbn(value));
  if (problem === 'format') return 'must be an ISBN-10 or ISBN-13 (digits, with optional hyphens or spaces)';
  if (problem === 'checkDigit') return 'has an invalid check digit';
  return undefined;
}

function IsIsbn(): PropertyDecorator {
  return ValidateBy({
    name: 'isIsbn',
    validator: {
      validate: (value: unknown) => isbnMessage(value) === undefined,
      defaultMessage: (args) => isbnMessage(args?.value) ?? 'must be a valid ISBN',
    },
  });
}

function priceMessage(value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
  if (value <= 0) return 'must be greater than 0';
  if (value > MAX_CENTS / 100) return 'must not be greater than 99999999.99';
  const cents = centsOfJsonNumber(value);
  if (cents === undefined) return 'must have at most 2 decimals';
  if (cents > MAX_CENTS) return 'must not be greater than 99999999.99';
  return undefined;
}

/** A JSON number > 0 with at most 2 decimals that fits DECIMAL(10,2). */
function IsPrice(): PropertyDecorator {
  return ValidateBy({
    name: 'isPrice',
    validator: {
      validate: (value: unknown) => priceMessage(value) === undefined,
      defaultMessage: (args) => priceMessage(args?.value) ?? 'must be a valid price',
    },
  });
}

function IsLanguageCode(): PropertyDecorator {
  return ValidateBy({
    name: 'isLanguageCode',
    validator: {
      validate: (value: unknown) => isLanguageCode(value),
      defaultMessage: () => 'must be an ISO 639-1 language code such as en',
    },
  });
}

function IsRealDate(): PropertyDecorator {
  return ValidateBy({
    name: 'isRealDate',
    validator: {
      validate: (value: unknown) => isIsoDate(value),
      defaultMessage: () => 'must be a real date in yyyy-MM-dd form',
    },
  });
}

export class BookRequestDto {
  @IsString()
  @IsIsbn()
  isbn!: string;

  @IsString()
  @Matches(NOT_BLANK, { message: 'must not be blank' })
  @Matches(NO_CONTROL_CHARACTERS, { message: 'must not contain control characters' })
  @MaxLength(MAX_TITLE)
  title!: string;

  /** Each author is checked by `authorErrors`, so that a failure names its index. */
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_AUTHORS)
  authors!: string[];

  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION)
  description?: string | null;

  @IsPrice()
  price!: number;

  @IsString()
  @IsLanguageCode()
  language!: string;

  @IsString()
  @IsRealDate()
  publishedDate!: string;

  @IsInt()
  @Min(0)
  @Max(MAX_STOCK)
  stock!: number;
}

/** The field order of the DTO, which is the order validation errors are listed in. */
const FIELD_ORDER = ['isbn', 'title', 'authors', 'description', 'price', 'language', 'publishedDate', 'stock'];

function authorErrors(authors: unknown): string[] {
  if (!Array.isArray(authors)) return [];
  const lines: string[] = [];
  authors.forEach((author: unknown, index) => {
    const path = `authors[${index}]`;
    if (typeof author !== 'string') lines.push(`${path}: must be a string`);
    else if (!NOT_BLANK.test(author)) lines.push(`${path}: must not be blank`);
    else if (CONTROL_CHARACTERS.test(author)) lines.push(`${path}: must not contain control characters`);
    else if (author.length > MAX_AUTHOR) lines.push(`${path}: must be shorter than or equal to ${MAX_AUTHOR} characters`);
  });
  return lines;
}

const fieldRank = (line: string) => FIELD_ORDER.indexOf(line.split(/[[.:]/, 1)[0]);

/** Validates a create or update body, or throws the contract's 400 listing every failing field. */
export async function parseBookRequest(body: unknown): Promise<BookRequestDto> {
  let dto: BookRequestDto | undefined;
  let lines: string[] = [];
  try {
    dto = await validateBody(BookRequestDto, body);
  } catch (error) {
    if (!(error instanceof AppError) || error.validationErrors === null) throw error;
    lines = [...error.validationErrors];
  }
  lines.push(...authorErrors((body as { authors?: unknown }).authors));
  if (lines.length > 0 || !dto) {
    // A stable sort keeps class-validator's order within a field and the authors' index order.
    throw validationFailed(lines.sort((a, b) => fieldRank(a) - fieldRank(b)));
  }
  return dto;
}

export interface BookResponseDto {
  id: string;
  isbn: string;
  title: string;
  authors: string[];
  description: string | null;
  price: number;
  language: string;
  publishedDate: string;
  stock: number;
  createdAt: string;
  updatedAt: string;
}
