// SQL of the emergency controls kept as rows of their own (migrations/0021): disabled grant types.
import type { Actor } from '../kernel/call.ts';
import type { Queryable, Tx } from '../platform/db/db.ts';

/** Records a disabled grant type; false when it was disabled already. */
export async function insertGrantTypeControl(
  tx: Tx,
  realmId: string,
  grantType: string,
  reason: string,
  actor: Actor,
  now: Date,
): Promise<boolean> {
  const r = await tx.query(
    `insert into emergency_controls (realm_id, target_type, target_id, action, reason, created_by_type,
       created_by_id, created_at)
     values ($1, 'grant_type', $2, 'disable', $3, $4, $5, $6) on conflict do nothing`,
    [realmId, grantType, reason, actor.type, actor.id, now],
  );
  return r.rowCount === 1;
}

/** Enables a grant type again; false when it was not disabled. */
export async function deleteGrantTypeControl(tx: Tx, realmId: string, grantType: string): Promise<boolean> {
  const r = await tx.query(
    `delete from emergency_controls where realm_id = $1 and target_type = 'grant_type' and target_id = $2`,
    [realmId, grantType],
  );
  return r.rowCount === 1;
}

export async function disabledGrantTypes(q: Queryable, realmId: string): Promise<string[]> {
  const r = await q.query<{ target_id: string }>(
    `select target_id from emergency_controls where realm_id = $1 and target_type = 'grant_type'`,
    [realmId],
  );
  return r.rows.map((row) => row.target_id);
}
