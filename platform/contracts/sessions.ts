/**
 * The auth service's list of recently revoked sessions (`GET /auth/internal/revoked-sessions`, with
 * the internal key), which every token verifier loads at start (platform/revocations.ts).
 */

/** One revoked session as the internal route lists it; `revokedAt` is ISO-8601 with its zone. */
export interface RevokedSessionDto {
  sessionId: string;
  userId: string;
  revokedAt: string;
}
