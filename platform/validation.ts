/**
 * Validation at the edge: class-validator DTOs, path and query parameters. Every failure becomes
 * the contract's 400 with `validationErrors` such as `items[0].quantity: must not be greater than 2000`.
 */
import 'reflect-metadata';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { ValidateBy, validate, type ValidationError } from 'class-validator';
import { badRequest, validationFailed } from './errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function childPath(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

function flatten(errors: ValidationError[], parent = ''): string[] {
  const lines: string[] = [];
  for (const error of errors) {
    const fieldPath = childPath(parent, error.property);
    for (const message of Object.values(error.constraints ?? {})) {
      const text = message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message;
      lines.push(`${fieldPath}: ${text}`);
    }
    if (error.children?.length) lines.push(...flatten(error.children, fieldPath));
  }
  return lines;
}

/** Far deeper than any request DTO (a checkout is three levels); the transformer and validator recurse. */
export const MAX_BODY_DEPTH = 32;

/** Whether a parsed JSON value nests objects or arrays deeper than `max`; iterative, so any depth is safe to ask about. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [current, depth] = next;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Whether a parsed JSON value holds a string (or key) with a lone surrogate (`"\ud800"`): JSON
 * allows the escape, but it is no Unicode text, validators choke on it (isEmail throws) and the
 * database would store U+FFFD instead.
 */
export function hasMalformedText(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'string') {
      if (LONE_SURROGATE.test(current)) return true;
    } else if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        if (LONE_SURROGATE.test(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

/**
 * A value as a keyed column stores it: trimmed and lower-cased (an account's email, the catalogue's
 * name keys), so `Ada@Example.com` and `ada@example.com ` are one key.
 */
export function storedKey(value: string): string {
  return value.trim().toLowerCase();
}

/**
 * Why `value` does not fit a column of `max` characters once stored as its `storedKey`, or undefined.
 * Lower-casing can lengthen a text (`İ` becomes `i̇`, two characters), and a database that enforces
 * widths (MariaDB) would fail the write or the lookup; so the limit is the stored value's, counted in
 * code points as a `varchar` counts (class-validator's MaxLength skips variation selectors).
 */
export function storedLengthProblem(value: string, max: number): string | undefined {
  const stored = [...storedKey(value)].length;
  if (stored <= max) return undefined;
  return [...value].length <= max ? `must be shorter than or equal to ${max} characters once lower-cased` : `must be shorter than or equal to ${max} characters`;
}

/** class-validator's side of `storedLengthProblem`: a string field stored trimmed and lower-cased in a column of `max` characters. */
export function MaxStoredLength(max: number): PropertyDecorator {
  return ValidateBy({
    name: 'maxStoredLength',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || storedLengthProblem(value, max) === undefined,
      defaultMessage: (args) => (typeof args?.value === 'string' && storedLengthProblem(args.value, max)) || `must be shorter than or equal to ${max} characters`,
    },
  });
}

/** Turns a parsed JSON body into a validated DTO instance, or throws the contract's 400. */
export async function validateBody<T extends object>(dto: ClassConstructor<T>, body: unknown): Promise<T> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('Request body must be a JSON object', 'MALFORMED_REQUEST');
  }
  if (nestedDeeperThan(body, MAX_BODY_DEPTH)) {
    throw badRequest(`Request body nests deeper than ${MAX_BODY_DEPTH} levels`, 'BODY_TOO_DEEP');
  }
  if (hasMalformedText(body)) {
    throw badRequest('Request body holds text that is not valid Unicode (a lone surrogate)', 'MALFORMED_TEXT');
  }
  const instance = plainToInstance(dto, body);
  const errors = await validate(instance, { whitelist: true, forbidUnknownValues: true });
  if (errors.length > 0) throw validationFailed(flatten(errors));
  return instance;
}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** A path or query parameter that must be a UUID; answers 400 otherwise. Normalised to lowercase. */
export function parseUuid(value: unknown, name: string): string {
  if (!isUuid(value)) throw validationFailed([`${name}: must be a UUID`]);
  return value.toLowerCase();
}

/** A real calendar date in `yyyy-MM-dd` form. */
export function isIsoDate(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** An optional `yyyy-MM-dd` query parameter; answers 400 when present and not a real date. */
export function parseOptionalDate(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (!isIsoDate(value)) throw validationFailed([`${name}: must be a date in yyyy-MM-dd form`]);
  return value;
}

/** A required, non-blank string query parameter. */
export function requireQueryString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw validationFailed([`${name}: must not be blank`]);
  }
  return value;
}

/** A query parameter that must be one of `allowed`; 400 naming them otherwise. */
export function parseOneOf<T extends string>(value: unknown, allowed: readonly T[], name: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw validationError(`${name}: must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** A 400 naming one field, e.g. `validationError('status: must be one of ...')`. */
export function validationError(line: string) {
  return validationFailed([line]);
}

/** `limit` and `offset` query parameters: integers, `limit` in 1..maxLimit, `offset` >= 0. */
export function parseLimitOffset(query: Record<string, unknown>, defaults: { limit: number; maxLimit: number }): { limit: number; offset: number } {
  const parse = (name: string, value: unknown, fallback: number, min: number, max: number): number => {
    if (value === undefined) return fallback;
    const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(number) || number < min || number > max) throw validationError(`${name}: must be an integer from ${min} to ${max}`);
    return number;
  };
  return {
    limit: parse('limit', query.limit, defaults.limit, 1, defaults.maxLimit),
    offset: parse('offset', query.offset, 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

/** GraphQL `limit` and `offset` arguments, held to the same rules as the REST query string. */
export function parseLimitOffsetArgs(args: { limit?: number | null; offset?: number | null }, defaults: { limit: number; maxLimit: number }): { limit: number; offset: number } {
  const asQueryString = (value: number | null | undefined) => (value === null || value === undefined ? undefined : String(value));
  return parseLimitOffset({ limit: asQueryString(args.limit), offset: asQueryString(args.offset) }, defaults);
}
