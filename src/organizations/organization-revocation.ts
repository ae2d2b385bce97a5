// Grants, refresh families and opaque access tokens bound to one organization end together (spec
// doc 2, Organization membership: suspension revokes the member's grants in the organization at
// once; Organization deletion revokes the organization's grants). JWT access tokens carrying the
// organization need no row: introspection already checks organization and membership state.
import type { Tx } from '../platform/db/db.ts';

export interface OrganizationRevocation {
  grants: number;
  refreshFamilies: number;
  opaqueTokens: number;
}

/**
 * Revokes, inside the caller's transaction, what is bound to the organization: for every user, or
 * for one user when `userId` is given.
 */
export async function revokeOrganizationGrants(
  tx: Tx,
  realmId: string,
  orgId: string,
  reason: string,
  now: Date,
  userId: string | null = null,
): Promise<OrganizationRevocation> {
  const grants = await tx.query<{ id: string }>(
    `update oauth_grants set revoked_at = $4, revoked_reason = $5
      where realm_id = $1 and org_id = $2 and ($3::text is null or user_id = $3) and revoked_at is null
      returning id`,
    [realmId, orgId, userId, now, reason],
  );
  // A family is bound through its own org_id or through the grant it was issued under.
  const families = await tx.query(
    `update refresh_families set revoked_at = $4, revoked_reason = $5
      where realm_id = $1 and revoked_at is null and ($3::text is null or user_id = $3)
        and (org_id = $2 or grant_id = any ($6::text[]))`,
    [realmId, orgId, userId, now, reason, grants.rows.map((g) => g.id)],
  );
  const opaque = await tx.query(
    `update opaque_access_tokens set revoked_at = $4
      where realm_id = $1 and org_id = $2 and ($3::text is null or user_id = $3)
        and revoked_at is null and expires_at > $4`,
    [realmId, orgId, userId, now],
  );
  return { grants: grants.rowCount, refreshFamilies: families.rowCount, opaqueTokens: opaque.rowCount };
}
