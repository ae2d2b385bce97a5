import { jsonColumn, type Queryable, type Tx } from '../platform/db/db.ts';

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

/**
 * A SQL expression giving the current policy of realm `realmIdSql` as one JSON column, so a
 * statement run anyway can bring it along (policyOfJson reads it).
 */
export const policyJsonSql = (realmIdSql: string): string =>
  `(select json_build_object('revision', p.revision, 'policy', p.policy) from realms r
      join realm_policy_revisions p on p.realm_id = r.id and p.revision = r.policy_revision
     where r.id = ${realmIdSql})`;

/** The policy of a policyJsonSql column. */
export function policyOfJson(realmId: string, v: unknown): RealmPolicy {
  const row = jsonColumn<{ revision: number; policy: Record<string, unknown> } | null>(v);
  if (!row) throw new Error(`realm ${realmId} has no current policy`);
  return { revision: Number(row.revision), document: jsonColumn<Record<string, unknown>>(row.policy) };
}

/** A member of a policy section, or undefined (policy documents are free-form JSON objects). */
export function policyValue(p: RealmPolicy, section: string, member: string): unknown {
  const s = p.document[section];
  return s && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>)[member] : undefined;
}

/** Stores `policy` as revision `revision` and makes it the realm's current one. */
export async function insertPolicyRevision(
  tx: Tx,
  realmId: string,
  revision: number,
  policy: Record<string, unknown>,
  reason: string,
  actorId: string | null,
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into realm_policy_revisions (realm_id, revision, policy, reason, created_by, created_at)
     values ($1, $2, $3, $4, $5, $6)`,
    [realmId, revision, JSON.stringify(policy), reason, actorId, now],
  );
  await tx.query('update realms set policy_revision = $2, updated_at = $3 where id = $1', [
    realmId,
    revision,
    now,
  ]);
}

/** related_origins of every realm whose current policy names `rpId` as its webauthn.rp_id. */
export async function relatedOriginsOf(q: Queryable, rpId: string): Promise<string[]> {
  const r = await q.query<{ origins: unknown }>(
    `select p.policy -> 'webauthn' -> 'related_origins' as origins from realms r
       join realm_policy_revisions p on p.realm_id = r.id and p.revision = r.policy_revision
      where p.policy -> 'webauthn' ->> 'rp_id' = $1`,
    [rpId],
  );
  return r.rows.flatMap((row) =>
    Array.isArray(row.origins) ? row.origins.filter((o): o is string => typeof o === 'string') : [],
  );
}
