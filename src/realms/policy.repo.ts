import type { Queryable } from '../platform/db/db.ts';

export interface RealmPolicy {
  revision: number;
  document: Record<string, unknown>;
}

export async function currentPolicy(q: Queryable, realmId: string): Promise<RealmPolicy> {
  const r = await q.query<{ revision: number; policy: Record<string, unknown> }>(
    `select p.revision, p.policy from realms r
       join realm_policy_revisions p on p.realm_id = r.id and p.revision = r.policy_revision
      where r.id = $1`,
    [realmId],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`realm ${realmId} has no current policy`);
  return { revision: Number(row.revision), document: row.policy };
}

/** A member of a policy section, or undefined (policy documents are free-form JSON objects). */
export function policyValue(p: RealmPolicy, section: string, member: string): unknown {
  const s = p.document[section];
  return s && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>)[member] : undefined;
}
