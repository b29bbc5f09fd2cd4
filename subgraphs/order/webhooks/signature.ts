/**
 * The `Bookstore-Signature` header (CONTRACT §11): `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<raw body>">`, one `v1` per secret in use (the new one first while a rotated-out secret
 * still overlaps). `verifyWebhookSignature` is what a receiver written in TypeScript can call.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Bookstore-Signature';
export const EVENT_ID_HEADER = 'Bookstore-Event-Id';

/** A new endpoint secret: `whsec_` and 32 random bytes in hex. The whole string is the HMAC key. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}

function hmac(secret: string, timestamp: number, rawBody: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/** The header for `rawBody` signed at `timestamp` with each of `secrets`. */
export function signatureHeader(rawBody: string | Buffer, secrets: readonly string[], timestamp = Math.floor(Date.now() / 1000)): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${hmac(secret, timestamp, rawBody)}`)].join(',');
}

/**
 * True when `header` carries a `v1` signature of `rawBody` made with `secret`, and its `t` is
 * within `toleranceSeconds` of now (a replayed old delivery is refused). Compares in constant time.
 */
export function verifyWebhookSignature(rawBody: string | Buffer, header: string | undefined, secret: string, toleranceSeconds = 300, now = Date.now()): boolean {
  if (!header) return false;
  const parts = header.split(',').map((part) => part.trim().split('=', 2) as [string, string | undefined]);
  const timestamp = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(timestamp) || Math.abs(now / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmac(secret, timestamp, rawBody), 'hex');
  return parts.some(([key, value]) => {
    if (key !== 'v1' || !value || !/^[0-9a-f]{64}$/i.test(value)) return false;
    return timingSafeEqual(Buffer.from(value, 'hex'), expected);
  });
}
