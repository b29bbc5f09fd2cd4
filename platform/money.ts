/**
 * Money is integer cents inside the code, a DECIMAL(12,2) in the database and a JSON number with
 * at most two decimals on the wire. Conversions go through the decimal text, never through
 * floating-point arithmetic, so 19.99 is 1999 cents exactly.
 */
import type { ValueTransformer } from 'typeorm';

const DECIMAL = /^(-?)(\d+)(?:\.(\d{1,2}))?$/;
/** The largest amount whose cents are a safe integer. */
const MAX_SAFE_AMOUNT = Math.floor(Number.MAX_SAFE_INTEGER / 100);

/** Cents from a decimal number or string with at most two decimals; throws on anything else. */
export function toCents(value: number | string): number {
  const text = typeof value === 'number' ? numberText(value) : value.trim();
  const match = DECIMAL.exec(text);
  if (!match) throw new RangeError(`Not an amount with at most two decimals: ${String(value)}`);
  const cents = Number(match[2]) * 100 + Number((match[3] ?? '').padEnd(2, '0'));
  if (!Number.isSafeInteger(cents)) throw new RangeError(`Amount out of range: ${String(value)}`);
  return match[1] === '-' ? -cents : cents;
}

/** The JSON number for an amount of cents: 5998 → 59.98 (the double whose shortest text is "59.98"). */
export function fromCents(cents: number): number {
  return Number(centsText(cents));
}

/** Decimal text with two places: 5998 → "59.98", 5 → "0.05". */
export function centsText(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Cents of a JSON number with at most two decimals (19.99 → 1999), or undefined for anything else, too large ones included. */
export function centsOfJsonNumber(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || !DECIMAL.test(numberText(value))) return undefined;
  if (Math.abs(value) > MAX_SAFE_AMOUNT) return undefined;
  return toCents(value);
}

function numberText(value: number): string {
  // Exponent forms (1e-7, 1e21) are never valid amounts; String() keeps them recognisable.
  return String(value);
}

/** TypeORM transformer for DECIMAL columns: cents in the entity, decimal text in the database. */
export const centsColumn: ValueTransformer = {
  to: (cents: number | null | undefined) => (cents === null || cents === undefined ? cents : centsText(cents)),
  from: (stored: string | number | null) => (stored === null || stored === undefined ? stored : toCents(typeof stored === 'number' ? stored.toFixed(2) : stored)),
};
