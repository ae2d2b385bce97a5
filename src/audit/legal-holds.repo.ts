// Audit legal holds (spec doc 2, Audit records and Audit endpoints): events they cover are never
// pruned while the hold is active.
import type { Queryable, Tx } from '../platform/db/db.ts';

export interface LegalHoldRow {
  realm_id: string;
  id: string;
  organization_id: string | null;
  subject_id: string | null;
  reason: string;
  created_by_id: string | null;
  created_at: Date;
  released_by_id: string | null;
  released_at: Date | null;
}

export async function insertLegalHold(tx: Tx, h: Omit<LegalHoldRow, 'released_by_id' | 'released_at'>) {
  await tx.query(
    `insert into audit_legal_holds (realm_id, id, organization_id, subject_id, reason, created_by_id, created_at)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [h.realm_id, h.id, h.organization_id, h.subject_id, h.reason, h.created_by_id, h.created_at],
  );
}

/** Active holds first, then released ones; newest first within each. */
export const listLegalHolds = (q: Queryable, realmId: string, limit: number) =>
  q.query<LegalHoldRow>(
    `select * from audit_legal_holds where realm_id = $1
      order by (released_at is null) desc, created_at desc, id desc limit ${limit}`,
    [realmId],
  );

export const activeLegalHolds = (q: Queryable, realmId: string) =>
  q.query<LegalHoldRow>('select * from audit_legal_holds where realm_id = $1 and released_at is null', [
    realmId,
  ]);

/** Releases an active hold; null when it is unknown or released already. */
export async function releaseLegalHold(
  tx: Tx,
  realmId: string,
  id: string,
  by: string | null,
  now: Date,
): Promise<LegalHoldRow | null> {
  const r = await tx.query<LegalHoldRow>(
    `update audit_legal_holds set released_by_id = $3, released_at = $4
      where realm_id = $1 and id = $2 and released_at is null returning *`,
    [realmId, id, by, now],
  );
  return r.rows[0] ?? null;
}
