// SQL of user imports: the user_imports row of each job (sealed document, then report) and the
// counts and samples the reconciliation reads across the tables an import writes.
import { many, maybeOne, one, type Queryable, type Tx } from '../platform/db/db.ts';

export interface UserImportRow {
  job_id: string;
  document_sealed: string | null;
  report: { records: unknown[]; counts: Record<string, number> } | null;
  created_at: Date;
  finished_at: Date | null;
}

export async function insertUserImport(tx: Tx, realmId: string, jobId: string, sealed: string, now: Date) {
  await tx.query(
    `insert into user_imports (realm_id, job_id, document_sealed, created_at) values ($1, $2, $3, $4)`,
    [realmId, jobId, sealed, now],
  );
}

export const findUserImport = (q: Queryable, realmId: string, jobId: string) =>
  maybeOne<UserImportRow>(
    q,
    'select job_id, document_sealed, report, created_at, finished_at from user_imports where realm_id = $1 and job_id = $2',
    [realmId, jobId],
  );

/** Stores the report and erases the document (with its verifiers and seeds) in the job's commit. */
export async function finishUserImport(tx: Tx, realmId: string, jobId: string, report: unknown, now: Date) {
  await tx.query(
    `update user_imports set report = $3, document_sealed = null, finished_at = $4 where realm_id = $1 and job_id = $2`,
    [realmId, jobId, JSON.stringify(report), now],
  );
}

/** Deletes reports `keepMs` after their job finished, and any row `staleMs` after it was made. */
export async function deleteOldUserImports(
  tx: Tx,
  now: Date,
  keepMs: number,
  staleMs: number,
): Promise<number> {
  const r = await tx.query(`delete from user_imports where finished_at <= $1 or created_at <= $2`, [
    new Date(now.getTime() - keepMs),
    new Date(now.getTime() - staleMs),
  ]);
  return r.rowCount;
}

export interface ImportedCounts {
  users: number;
  deleted_locally: number;
  memberships: number;
  password_verifiers: number;
  totp_factors: number;
}

/** What the realm holds now of the accounts imported from `sourceSystem`. */
export async function importedCounts(
  q: Queryable,
  realmId: string,
  sourceSystem: string,
): Promise<ImportedCounts> {
  const row = await one<Record<keyof ImportedCounts, string>>(
    q,
    `with x as (
       select x.user_id, x.erased_at, u.state from user_external_ids x
         join users u on u.realm_id = x.realm_id and u.id = x.user_id
        where x.realm_id = $1 and x.source_system = $2)
     select
       (select count(*) from x where erased_at is null and state <> 'deleted') as users,
       (select count(*) from x where erased_at is not null or state = 'deleted') as deleted_locally,
       (select count(*) from memberships m join x on m.user_id = x.user_id
         where m.realm_id = $1 and m.source = 'import' and m.state = 'active') as memberships,
       (select count(*) from password_credentials p join x on p.user_id = x.user_id
         where p.realm_id = $1) as password_verifiers,
       (select count(*) from totp_credentials t join x on t.user_id = x.user_id
         where t.realm_id = $1) as totp_factors`,
    [realmId, sourceSystem],
  );
  return {
    users: Number(row.users),
    deleted_locally: Number(row.deleted_locally),
    memberships: Number(row.memberships),
    password_verifiers: Number(row.password_verifiers),
    totp_factors: Number(row.totp_factors),
  };
}

const LIVE_IMPORTED = `from user_external_ids x
       join users u on u.realm_id = x.realm_id and u.id = x.user_id and u.state <> 'deleted'`;

/** Up to `n` password verifiers of live accounts of the source, chosen at random. */
export const sampleImportedVerifiers = (q: Queryable, realmId: string, sourceSystem: string, n: number) =>
  many<{ user_id: string; hash: string; pepper_version: number | null }>(
    q,
    `select x.user_id, p.hash, p.pepper_version ${LIVE_IMPORTED}
       join password_credentials p on p.realm_id = x.realm_id and p.user_id = x.user_id
      where x.realm_id = $1 and x.source_system = $2 and x.erased_at is null
      order by random() limit $3`,
    [realmId, sourceSystem, n],
  );

/** Up to `n` live accounts of the source holding a TOTP authenticator, chosen at random. */
export const sampleImportedTotpHolders = async (
  q: Queryable,
  realmId: string,
  sourceSystem: string,
  n: number,
) =>
  (
    await many<{ user_id: string }>(
      q,
      `select x.user_id ${LIVE_IMPORTED}
        where x.realm_id = $1 and x.source_system = $2 and x.erased_at is null
          and exists (select 1 from totp_credentials t where t.realm_id = x.realm_id and t.user_id = x.user_id)
        order by random() limit $3`,
      [realmId, sourceSystem, n],
    )
  ).map((r) => r.user_id);
