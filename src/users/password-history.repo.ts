// Earlier password verifiers of an account, for password.history_count.
import type { Queryable, Tx } from '../platform/db/db.ts';
import type { PasswordVerifier } from './password-hasher.ts';

export async function recentPasswords(
  q: Queryable,
  realmId: string,
  userId: string,
  n: number,
): Promise<PasswordVerifier[]> {
  if (n <= 0) return [];
  const r = await q.query<{ hash: string; pepper_version: number | null }>(
    `select hash, pepper_version from password_history where realm_id = $1 and user_id = $2
      order by created_at desc limit $3`,
    [realmId, userId, n],
  );
  return r.rows.map((row) => ({
    hash: row.hash,
    pepperVersion: row.pepper_version === null ? null : Number(row.pepper_version),
  }));
}

export async function pushPasswordHistory(
  tx: Tx,
  realmId: string,
  userId: string,
  v: PasswordVerifier,
  keep: number,
  now: Date,
): Promise<void> {
  await tx.query(
    'insert into password_history (realm_id, user_id, hash, pepper_version, created_at) values ($1, $2, $3, $4, $5)',
    [realmId, userId, v.hash, v.pepperVersion, now],
  );
  await tx.query(
    `delete from password_history where realm_id = $1 and user_id = $2 and created_at not in (
       select created_at from password_history where realm_id = $1 and user_id = $2 order by created_at desc limit $3)`,
    [realmId, userId, Math.max(keep, 0)],
  );
}
