// SQL of registrations held for approval and of terms acceptances (migrations/0019).
import type { Queryable, Tx } from '../platform/db/db.ts';

export async function holdRegistration(tx: Tx, realmId: string, userId: string, now: Date): Promise<void> {
  await tx.query(
    `insert into registration_approvals (realm_id, user_id, state, created_at) values ($1, $2, 'pending', $3)`,
    [realmId, userId, now],
  );
}

/** Decides a pending registration; false when none is pending for the account. */
export async function decideRegistration(
  tx: Tx,
  realmId: string,
  userId: string,
  state: 'approved' | 'denied',
  by: string | null,
  now: Date,
): Promise<boolean> {
  const r = await tx.query(
    `update registration_approvals set state = $3, decided_at = $4, decided_by = $5
      where realm_id = $1 and user_id = $2 and state = 'pending'`,
    [realmId, userId, state, now, by],
  );
  return r.rowCount === 1;
}

export interface PendingRegistration {
  user_id: string;
  created_at: Date;
  display_name: string | null;
  email: string | null;
}

export async function listPendingRegistrations(q: Queryable, realmId: string, limit: number) {
  const r = await q.query<PendingRegistration>(
    `select a.user_id, a.created_at, u.display_name,
            (select value from user_identifiers i where i.realm_id = a.realm_id and i.user_id = a.user_id
              and i.type = 'email' limit 1) as email
       from registration_approvals a join users u on u.realm_id = a.realm_id and u.id = a.user_id
      where a.realm_id = $1 and a.state = 'pending' order by a.created_at limit $2`,
    [realmId, limit],
  );
  return r.rows;
}

export async function acceptTerms(tx: Tx, realmId: string, userId: string, version: string, now: Date) {
  await tx.query(
    `insert into terms_acceptances (realm_id, user_id, version, accepted_at) values ($1, $2, $3, $4)
     on conflict do nothing`,
    [realmId, userId, version, now],
  );
}
