// A database backup and restore inside one test database, for the restore exercise: every table
// holding a realm_id has the realm's rows copied at backup time and put back at restore time,
// with triggers and foreign keys held off (as pg_restore loads data), so the database is what the
// backup held, revocation log table included, while the server keeps running on it.
import type { Harness } from './harness.ts';

// Audit records are append-only evidence with a hash chain across realms; a restore of them is the
// audit archive's business, not this exercise's.
const KEPT = new Set(['audit_events', 'audit_batches', 'audit_legal_holds']);

export interface Backup {
  /** The database's time when the backup was taken. */
  takenAt: Date;
  restore(): Promise<void>;
}

export async function backupRealm(h: Harness, realmId: string): Promise<Backup> {
  const db = h.ctx.db;
  const tables = (
    await db.query<{ table_name: string }>(
      `select c.table_name from information_schema.columns c
         join information_schema.tables t on t.table_name = c.table_name and t.table_schema = c.table_schema
        where c.table_schema = current_schema() and c.column_name = 'realm_id' and t.table_type = 'BASE TABLE'
        order by c.table_name`,
    )
  ).rows
    .map((r) => r.table_name)
    .filter((t) => !KEPT.has(t));
  const copies = new Map<string, string>();
  const takenAt = (await db.query<{ now: Date }>('select clock_timestamp() as now')).rows[0]?.now as Date;
  for (const t of tables) {
    const r = await db.query<{ rows: unknown }>(
      `select coalesce(jsonb_agg(to_jsonb(x)), '[]'::jsonb) as rows from ${t} x where realm_id = $1`,
      [realmId],
    );
    const rows = r.rows[0]?.rows;
    copies.set(t, typeof rows === 'string' ? rows : JSON.stringify(rows));
  }
  return {
    takenAt: new Date(takenAt),
    restore: () =>
      db.tx(async (tx) => {
        await tx.query(`set local session_replication_role = replica`);
        for (const [t, rows] of copies) {
          await tx.query(`delete from ${t} where realm_id = $1`, [realmId]);
          await tx.query(
            `insert into ${t} overriding system value select * from jsonb_populate_recordset(null::${t}, $1::jsonb)`,
            [rows],
          );
        }
      }),
  };
}
