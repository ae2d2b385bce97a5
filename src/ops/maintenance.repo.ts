// SQL of the deployment's maintenance mode (migrations/0021): one row every process reads.
import type { Queryable, Tx } from '../platform/db/db.ts';

export type MaintenanceMode = 'off' | 'read_only' | 'closed' | 'debug';
export const MAINTENANCE_MODES: readonly MaintenanceMode[] = ['off', 'read_only', 'closed', 'debug'];

export interface MaintenanceState {
  mode: MaintenanceMode;
  message: string | null;
  retryAfterSeconds: number | null;
  debugUntil: Date | null;
  debugComponent: string | null;
  updatedAt: Date | null;
  updatedBy: string | null;
}

export const MAINTENANCE_OFF: MaintenanceState = {
  mode: 'off',
  message: null,
  retryAfterSeconds: null,
  debugUntil: null,
  debugComponent: null,
  updatedAt: null,
  updatedBy: null,
};

interface Row {
  mode: MaintenanceMode;
  message: string | null;
  retry_after_seconds: number | null;
  debug_until: Date | null;
  debug_component: string | null;
  updated_at: Date;
  updated_by: string | null;
}

/** The current row; never set means off. */
export async function readMaintenance(q: Queryable): Promise<MaintenanceState> {
  const r = await q.query<Row>('select * from maintenance_mode where singleton');
  const row = r.rows[0];
  if (!row) return MAINTENANCE_OFF;
  return {
    mode: row.mode,
    message: row.message,
    retryAfterSeconds: row.retry_after_seconds === null ? null : Number(row.retry_after_seconds),
    debugUntil: row.debug_until === null ? null : new Date(row.debug_until),
    debugComponent: row.debug_component,
    updatedAt: new Date(row.updated_at),
    updatedBy: row.updated_by,
  };
}

/** Replaces the row; answers the state before, locked so concurrent changes queue. */
export async function writeMaintenance(tx: Tx, s: MaintenanceState): Promise<MaintenanceState> {
  await tx.query('select 1 from maintenance_mode where singleton for update');
  const before = await readMaintenance(tx);
  await tx.query(
    `insert into maintenance_mode (singleton, mode, message, retry_after_seconds, debug_until, debug_component,
       updated_at, updated_by)
     values (true, $1, $2, $3, $4, $5, $6, $7)
     on conflict (singleton) do update set mode = excluded.mode, message = excluded.message,
       retry_after_seconds = excluded.retry_after_seconds, debug_until = excluded.debug_until,
       debug_component = excluded.debug_component, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
    [s.mode, s.message, s.retryAfterSeconds, s.debugUntil, s.debugComponent, s.updatedAt, s.updatedBy],
  );
  return before;
}
