// SQL of directory.sync (docs/provisioning.md, Pull): finding what an earlier run of a target made
// here when its link was not written (the run ended between the change and the link).
import { maybeOne, type Queryable } from '../platform/db/db.ts';

/** The account this target's sync provisioned under this userName (scim_users, migration 0037). */
export async function findPulledUser(
  q: Queryable,
  realmId: string,
  targetId: string,
  userName: string,
): Promise<string | null> {
  const row = await maybeOne<{ user_id: string }>(
    q,
    `select user_id from scim_users where realm_id = $1 and connector_id = $2 and user_name_key = $3`,
    [realmId, targetId, userName.toLowerCase()],
  );
  return row?.user_id ?? null;
}

/** The group of the target's scope this sync made for the remote group (its external id). */
export async function findPulledGroup(
  q: Queryable,
  t: { realm_id: string; organization_id: string | null },
  remoteId: string,
): Promise<string | null> {
  const row = await maybeOne<{ id: string }>(
    q,
    `select id from groups where realm_id = $1 and organization_id is not distinct from $2
        and external_id = $3 order by id limit 1`,
    [t.realm_id, t.organization_id, remoteId],
  );
  return row?.id ?? null;
}
