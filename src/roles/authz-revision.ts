// What a subject may do changed (roles, assignments, memberships, groups, relationships): the
// realm's authorization revision moves (the decision API's policy_version) and so does each named
// subject's authz_version, which introspection reports (doc 2, Revocation exposure).
import type { Tx } from '../platform/db/db.ts';

export interface AffectedSubject {
  type: 'user' | 'service_principal';
  id: string;
}

export async function authorizationChanged(
  tx: Tx,
  realmId: string,
  subjects: readonly AffectedSubject[] = [],
): Promise<void> {
  await tx.query('update realms set authz_revision = authz_revision + 1 where id = $1', [realmId]);
  const users = subjects.filter((s) => s.type === 'user').map((s) => s.id);
  const principals = subjects.filter((s) => s.type === 'service_principal').map((s) => s.id);
  if (users.length > 0) {
    await tx.query(
      'update users set authz_version = authz_version + 1 where realm_id = $1 and id = any ($2::text[])',
      [realmId, users],
    );
  }
  if (principals.length > 0) {
    await tx.query(
      'update service_principals set authz_version = authz_version + 1 where realm_id = $1 and id = any ($2::text[])',
      [realmId, principals],
    );
  }
}
