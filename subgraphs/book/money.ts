/**
 * Money in integer cents. JSON numbers and DECIMAL(10,2) values are converted through their
 * decimal text, never through binary floating-point arithmetic (4.35 * 100 is 434.99999999999994).
 */

/** DECIMAL(10,2): the largest price the column holds. */
export const MAX_CENTS = 99_999_999_99;

const DECIMAL = /^(\d+)(?:\.(\d{1,2}))?$/;

/** Cents of a non-negative decimal text with at most 2 decimals, or undefined. */
function centsOfText(text: string): number | undefined {
  const match = DECIMAL.exec(text);
  if (!match) return undefined;
  const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(cents) ? cents : undefined;
}

/**
 * Cents of a JSON number with at most 2 decimals. `String(n)` is the shortest text that reads back
 * as `n`, so 19.99 gives "19.99"; a number with more decimals, or in exponent form, gives undefined.
 */
export function centsFromJsonNumber(value: number): number | undefined {
  return Number.isFinite(value) ? centsOfText(String(value)) : undefined;
}

/** Cents of a DECIMAL(10,2) read back: a string on MySQL ("19.90"), a number on SQLite (19.9). */
export function centsFromDecimal(value: string | number): number {
  const cents = centsOfText(typeof value === 'number' ? String(value) : value);
  if (cents === undefined) throw new Error(`not a DECIMAL(10,2) price: ${String(value)}`);
  return cents;
}

/** "19.99" from 1999: integer arithmetic only. */
export function centsToDecimalText(cents: number): string {
  const fraction = cents % 100;
  return `${(cents - fraction) / 100}.${String(fraction).padStart(2, '0')}`;
}

/** The JSON number for a price: the double nearest its decimal text, which JSON writes back as that text. */
export function centsToJsonNumber(cents: number): number {
  return Number(centsToDecimalText(cents));
}
