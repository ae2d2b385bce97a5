// Opaque access tokens (pa_at_...) are found by the digest of the token; their claims are stored.
import { maybeOne, type Queryable } from '../platform/db/db.ts';
import { type AccessTokenClaims, opaqueAccessTokenDigest } from './access-token.ts';

export interface StoredOpaqueToken {
  resourceId: string;
  claims: AccessTokenClaims;
}

/**
 * The stored token when it is neither revoked nor expired; expiry is judged with the clock
 * tolerance JWTs get (tokens.clock_skew), so both formats end at the same moment.
 */
export async function findLiveOpaqueToken(
  q: Queryable,
  realmId: string,
  token: string,
  now: Date,
  clockSkewMs: number,
): Promise<StoredOpaqueToken | null> {
  const row = await maybeOne<{ resource_id: string; claims: AccessTokenClaims | string; expires_at: Date }>(
    q,
    `select resource_id, claims, expires_at from opaque_access_tokens
      where realm_id = $1 and token_digest = $2 and revoked_at is null`,
    [realmId, opaqueAccessTokenDigest(token)],
  );
  if (!row || now.getTime() >= new Date(row.expires_at).getTime() + clockSkewMs) return null;
  const claims = typeof row.claims === 'string' ? (JSON.parse(row.claims) as AccessTokenClaims) : row.claims;
  return { resourceId: row.resource_id, claims };
}
