/** Display helpers. Money stays a decimal string: it is regrouped for reading, never put through a float. */

export function money(value: string): string {
  const negative = value.startsWith('-');
  const [whole = '0', cents = ''] = (negative ? value.slice(1) : value).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}.${cents.padEnd(2, '0').slice(0, 2)}`;
}

/** A non-negative decimal string (`12.5`, `12.50`) in cents, without a float; NaN for anything else. */
export function cents(value: string): number {
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(value.trim());
  return match ? Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0')) : Number.NaN;
}

/** Cents as the API's decimal string, `1234` as `12.34`. */
export function decimal(amountCents: number): string {
  return `${Math.trunc(amountCents / 100)}.${String(amountCents % 100).padStart(2, '0')}`;
}

export function count(value: number): string {
  return value.toLocaleString('en-US');
}

export function percent(value: number): string {
  return `${value.toFixed(2)} %`;
}

/** `2026-11-21T23:03:18.123` (UTC, no zone) as `2026-11-21 23:03 UTC`. */
export function timestamp(value: string): string {
  return `${value.slice(0, 10)} ${value.slice(11, 16)} UTC`;
}

/** The first block of a UUID, enough to tell rows apart; the full id goes in a title. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

export function fullName(user: { firstName: string; lastName: string }): string {
  return `${user.firstName} ${user.lastName}`.trim();
}

export const DAY_MS = 86_400_000;

export function isoDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** The server's default range: `to` today (UTC), `from` 30 days before. */
export function defaultRange(now = Date.now()): { from: string; to: string } {
  return { from: isoDay(now - 30 * DAY_MS), to: isoDay(now) };
}

export function isIsoDay(value: string | null | undefined): value is string {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value);
}
