// Changing a realm's policy: members given replace stored ones (objects member by member, other
// values whole), the result is stored as a new revision, audited as realm.policy.updated.

import type { Actor } from '../audit/audit.types.ts';
import { inChange } from '../audit/index.ts';
import { systemCall } from '../kernel/call.ts';
import type { Db } from '../platform/db/db.ts';
import { currentPolicy } from './policy.repo.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function mergePolicy(stored: Json, patch: Json): Json {
  const out: Json = { ...stored };
  for (const [k, v] of Object.entries(patch))
    out[k] = isObject(v) && isObject(stored[k]) ? mergePolicy(stored[k], v) : v;
  return out;
}

/** Returns the new revision, or the current one when the patch changes nothing. */
export async function updatePolicy(
  db: Db,
  realmId: string,
  patch: Json,
  actor: Actor,
  reason: string,
  now: Date,
): Promise<number> {
  return inChange(db, systemCall(realmId, now, actor), async (tx, record) => {
    await tx.query('select 1 from realms where id = $1 for update', [realmId]);
    const current = await currentPolicy(tx, realmId);
    const next = mergePolicy(current.document, patch);
    if (JSON.stringify(next) === JSON.stringify(current.document)) return current.revision;
    const revision = current.revision + 1;
    await tx.query(
      `insert into realm_policy_revisions (realm_id, revision, policy, reason, created_by, created_at)
       values ($1, $2, $3, $4, $5, $6)`,
      [realmId, revision, JSON.stringify(next), reason, actor.id, now],
    );
    await tx.query('update realms set policy_revision = $2, updated_at = $3 where id = $1', [
      realmId,
      revision,
      now,
    ]);
    await record.audit('realm.policy.updated', {
      category: 'configuration',
      target: { type: 'realm', id: realmId },
      signal: 'configuration_change',
      reason,
      data: { policy_revision: revision, previous_revision: current.revision, members: Object.keys(patch) },
    });
    return revision;
  });
}
