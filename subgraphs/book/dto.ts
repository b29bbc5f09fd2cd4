/**
 * Request and response shapes of the catalogue (CONTRACT §4) with the reference's messages. Each
 * field has one check that answers its first problem, so a client sees one line per field, e.g.
 * `isbn: ISBN is required` or `authorIds[1]: must be a UUID`. The book as other services read it
 * is platform/contracts/books.ts.
 */
import { ValidateBy } from 'class-validator';
import { AppError, validationFailed } from '../../platform/errors';
import { validateBody, isIsoDate, isUuid, storedLengthProblem } from '../../platform/validation';
import { isbnProblem, normalizeIsbn } from './isbn';
import { isLanguageCode } from './languages';
import { centsOfJsonNumber } from '../../platform/money';

/** DECIMAL(10,2): the largest price the column holds. */
export const MAX_CENTS = 99_999_999_99;

export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
/** Free text (a description, a biography) may hold line breaks and tabs, no other control characters. */
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

export const MAX_TITLE = 255;
export const MAX_AUTHORS = 20;
export const MAX_DESCRIPTION = 5_000;
export const MAX_STOCK = 2_147_483_647;
/** A language name such as "English" (or an ISO 639-1 code such as "en"). */
const LANGUAGE_NAME = /^\p{L}[\p{L} ()-]{2,49}$/u;

/** `object`: the whole body, for a check that spans fields. */
type Problem = (value: unknown, object: object) => string | undefined;

/** One decorator per field: the first problem of the value, or none. */
function Check(problem: Problem): PropertyDecorator {
  return ValidateBy({
    name: 'check',
    validator: {
      validate: (value: unknown, args) => problem(value, args?.object ?? {}) === undefined,
      defaultMessage: (args) => problem(args?.value, args?.object ?? {}) ?? 'is invalid',
    },
  });
}

const blank = (value: unknown) => value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/**
 * How a text is kept: `multiline` allows line breaks and tabs; `keyed` means it also goes, trimmed
 * and lower-cased, into a name key of the same width (authors, categories, publishers), so the
 * limit holds for that form too.
 */
interface TextRules {
  multiline?: boolean;
  keyed?: boolean;
}

/** `measured`: the form whose length counts (a required line's is trimmed). */
function textProblem(value: string, measured: string, max: number, rules: TextRules): string | undefined {
  if ((rules.multiline ? CONTROL_IN_TEXT : CONTROL_CHARACTERS).test(value)) return 'must not contain control characters';
  if (measured.length > max) return `must be shorter than or equal to ${max} characters`;
  return rules.keyed ? storedLengthProblem(value, max) : undefined;
}

/** A required single-line text: `required` when missing or blank. */
function requiredLine(required: string, max: number, rules: TextRules = {}): Problem {
  return (value) => {
    if (blank(value)) return required;
    if (typeof value !== 'string') return 'must be a string';
    return textProblem(value, value.trim(), max, rules);
  };
}

/** Optional text: absent, null or a string of at most `max` characters. */
function optionalText(max: number, rules: TextRules = {}): Problem {
  return (value) => {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') return 'must be a string';
    return textProblem(value, value, max, rules);
  };
}

const isbnCheck: Problem = (value) => {
  if (blank(value)) return 'ISBN is required';
  if (typeof value !== 'string') return 'must be a string';
  const problem = isbnProblem(normalizeIsbn(value));
  if (problem === 'format') return 'must be an ISBN-10 or ISBN-13 (digits, with optional hyphens or spaces)';
  if (problem === 'checkDigit') return 'has an invalid check digit';
  return undefined;
};

const priceCheck: Problem = (value) => {
  if (value === undefined || value === null) return 'Price is required';
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
  if (value <= 0) return 'Price must be positive';
  const cents = centsOfJsonNumber(value);
  if (cents === undefined) return 'must have at most 2 decimals';
  if (cents > MAX_CENTS) return 'must not be greater than 99999999.99';
  return undefined;
};

const languageCheck: Problem = (value) => {
  if (blank(value)) return 'Language is required';
  if (typeof value !== 'string') return 'must be a string';
  const text = value.trim();
  if (text.length === 2 ? isLanguageCode(text) : LANGUAGE_NAME.test(text)) return undefined;
  return 'must be an ISO 639-1 code such as en or a language name such as English';
};

const dateCheck: Problem = (value) => (value === undefined || value === null || value === '' || isIsoDate(value) ? undefined : 'must be a real date in yyyy-MM-dd form');

function referenceCheck(required: string): Problem {
  return (value) => {
    if (blank(value)) return required;
    return isUuid(value) ? undefined : 'must be a UUID';
  };
}

/** Each entry is checked by `authorIdErrors`, so a failure names its index. */
const authorIdsCheck: Problem = (value) => {
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return 'At least one author is required';
  if (!Array.isArray(value)) return 'must be an array of author ids';
  if (value.length > MAX_AUTHORS) return `must contain no more than ${MAX_AUTHORS} elements`;
  const ids = value.filter(isUuid).map((id) => id.toLowerCase());
  if (new Set(ids).size !== ids.length) return 'must not list an author twice';
  return undefined;
};

const stockCheck: Problem = (value) => {
  if (value === undefined || value === null) return undefined;
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_STOCK ? undefined : `must be an integer from 0 to ${MAX_STOCK}`;
};

export class BookRequestDto {
  @Check(isbnCheck) isbn!: string;
  @Check(requiredLine('Title is required', MAX_TITLE)) title!: string;
  @Check(optionalText(MAX_DESCRIPTION, { multiline: true })) description?: string | null;
  @Check(priceCheck) price!: number;
  @Check(languageCheck) language!: string;
  @Check(dateCheck) publishedDate?: string | null;
  @Check(referenceCheck('Publisher is required')) publisherId!: string;
  @Check(referenceCheck('Category is required')) categoryId!: string;
  @Check(authorIdsCheck) authorIds!: string[];
  /** Absent: a new book is untracked, an updated one keeps its stock. */
  @Check(stockCheck) stock?: number | null;
}

function authorIdErrors(authorIds: unknown): string[] {
  if (!Array.isArray(authorIds)) return [];
  return authorIds.flatMap((id: unknown, index) => (isUuid(id) ? [] : [`authorIds[${index}]: must be a UUID`]));
}

/** The field order of the DTO, which is the order validation errors are listed in. */
const FIELD_ORDER = ['isbn', 'title', 'description', 'price', 'language', 'publishedDate', 'publisherId', 'categoryId', 'authorIds', 'stock'];
const fieldRank = (line: string) => FIELD_ORDER.indexOf(line.split(/[[.:]/, 1)[0]);

/** Validates a book create or update body, or throws the contract's 400 listing every failing field. */
export async function parseBookRequest(body: unknown): Promise<BookRequestDto> {
  return validateWith(BookRequestDto, body, (lines) => [...lines, ...authorIdErrors((body as { authorIds?: unknown }).authorIds)].sort((a, b) => fieldRank(a) - fieldRank(b)));
}

/** An author's name key ("first last", trimmed and lower-cased) has a column of this width (entities.ts). */
const AUTHOR_KEY_MAX = 201;

/**
 * The last name, and then the name key it makes with the first name. A first name alone cannot
 * outgrow the key (lower-casing at most doubles a text, and 2 × 100 < 201), so the key's problem is
 * reported on the last name.
 */
const lastNameCheck: Problem = (value, author) => {
  const own = optionalText(100)(value, author);
  if (own !== undefined) return own;
  const { firstName } = author as { firstName?: unknown };
  if (typeof firstName !== 'string' || typeof value !== 'string') return undefined;
  const key = [firstName.trim(), value.trim()].filter(Boolean).join(' ');
  return storedLengthProblem(key, AUTHOR_KEY_MAX) && `with the first name, must be shorter than or equal to ${AUTHOR_KEY_MAX} characters once lower-cased`;
};

export class AuthorRequestDto {
  @Check(requiredLine('First name is required', 100)) firstName!: string;
  @Check(lastNameCheck) lastName?: string | null;
  @Check(optionalText(MAX_DESCRIPTION, { multiline: true })) biography?: string | null;
  @Check(optionalText(100)) country?: string | null;
}

export class CategoryRequestDto {
  @Check(requiredLine('Category name is required', 100, { keyed: true })) name!: string;
  @Check(optionalText(MAX_DESCRIPTION, { multiline: true })) description?: string | null;
}

export class PublisherRequestDto {
  @Check(requiredLine('Publisher name is required', 150, { keyed: true })) name!: string;
  @Check(optionalText(500)) address?: string | null;
}

/** Runs the DTO's checks; `extra` may add per-element lines (and order them) before the 400. */
async function validateWith<T extends object>(dto: new () => T, body: unknown, extra: (lines: string[]) => string[] = (lines) => lines): Promise<T> {
  let instance: T | undefined;
  let lines: string[] = [];
  try {
    instance = await validateBody(dto, body);
  } catch (error) {
    if (!(error instanceof AppError) || error.validationErrors === null) throw error;
    lines = [...error.validationErrors];
  }
  const all = extra(lines);
  if (all.length > 0 || !instance) throw validationFailed(all);
  return instance;
}

export const parseAuthorRequest = (body: unknown) => validateWith(AuthorRequestDto, body);
export const parseCategoryRequest = (body: unknown) => validateWith(CategoryRequestDto, body);
export const parsePublisherRequest = (body: unknown) => validateWith(PublisherRequestDto, body);

/** The most books one page of the list may hold. */
export const MAX_LIMIT = 100;
const MAX_QUERY_LENGTH = 200;
const MAX_OFFSET = 2_147_483_647;

function integerParameter(value: unknown, min: number, max: number): number | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) return null;
  const number = Number(value);
  return number >= min && number <= max ? number : null;
}

/** The filtered list of books as the service reads it (`parseListQuery` makes one). */
export interface BookListQuery {
  /** Case-insensitive substring of the title, an author's name or the ISBN; blank means every book. */
  q?: string;
  categoryId?: string;
  publisherId?: string;
  authorId?: string;
  /** Absent: every matching book. */
  limit?: number;
  offset: number;
}

/** Adds what is wrong with `q` to `errors`, the same for the list and the search. */
function checkText(q: unknown, errors: string[]): string | undefined {
  if (q === undefined) return undefined;
  if (typeof q !== 'string') errors.push('q: must be a single string');
  else if (q.length > MAX_QUERY_LENGTH) errors.push(`q: must be shorter than or equal to ${MAX_QUERY_LENGTH} characters`);
  else if (CONTROL_CHARACTERS.test(q)) errors.push('q: must not contain control characters');
  return q as string;
}

/** `limit` and `offset` as the list and the search take them; what is wrong goes to `errors`. */
function pageOf(query: Record<string, unknown>, errors: string[]): { limit?: number; offset: number } {
  const limit = integerParameter(query.limit, 1, MAX_LIMIT);
  if (limit === null) errors.push(`limit: must be an integer between 1 and ${MAX_LIMIT}`);
  const offset = integerParameter(query.offset, 0, MAX_OFFSET);
  if (offset === null) errors.push(`offset: must be an integer between 0 and ${MAX_OFFSET}`);
  return { limit: limit ?? undefined, offset: offset ?? 0 };
}

/**
 * `q`, `categoryId`, `publisherId`, `authorId`, `limit` (1..100; absent: every match) and `offset`
 * (>= 0); every bad one is listed in one 400. GraphQL's `books` uses it too.
 */
export function parseListQuery(query: Record<string, unknown>): BookListQuery {
  const errors: string[] = [];
  const q = checkText(query.q, errors);
  const ids: Partial<Record<'categoryId' | 'publisherId' | 'authorId', string>> = {};
  for (const name of ['categoryId', 'publisherId', 'authorId'] as const) {
    const value = query[name];
    if (value === undefined) continue;
    if (isUuid(value)) ids[name] = value.toLowerCase();
    else errors.push(`${name}: must be a UUID`);
  }
  const { limit, offset } = pageOf(query, errors);
  if (errors.length > 0) throw validationFailed(errors);
  return { q, ...ids, limit, offset };
}

/** A page of the full-text search (`GET /api/books/search`, GraphQL `searchBooks`). */
export interface BookSearchQuery {
  q: string;
  limit: number;
  offset: number;
}

/** A search page holds this many books unless `limit` says otherwise: a search is read a page at a time. */
export const SEARCH_DEFAULT_LIMIT = 20;

/** `q` is required and not blank; `limit` (1..100, default 20) and `offset` as on the list. */
export function parseSearchQuery(query: Record<string, unknown>): BookSearchQuery {
  const errors: string[] = [];
  const q = checkText(query.q, errors);
  if (q === undefined || (typeof q === 'string' && q.trim() === '')) errors.push('q: must not be blank');
  const { limit, offset } = pageOf(query, errors);
  if (errors.length > 0) throw validationFailed(errors);
  return { q: q as string, limit: limit ?? SEARCH_DEFAULT_LIMIT, offset };
}

export interface AuthorResponseDto {
  id: string;
  firstName: string;
  lastName: string | null;
  biography: string | null;
  country: string | null;
}

export interface CategoryResponseDto {
  id: string;
  name: string;
  description: string | null;
}

export interface PublisherResponseDto {
  id: string;
  name: string;
  address: string | null;
}
