/** Identifiers every replica derives alike from what it is given, so a retry or a concurrent request arrives at the same one. */
import { createHash } from 'node:crypto';

/** A UUID named by `namespace` and `name`: SHA-1 of both, in the layout of a name-based (version 5) UUID, lower case. */
export function nameBasedUuid(namespace: string, name: string): string {
  const bytes = createHash('sha1').update(`${namespace}\u0000${name}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
