// The restore marker (document 2, Restore marker): one row in `restore_marker` while a restored
// database waits for reconciliation. While it is set, readiness answers restore_pending, the worker
// refuses to start, a running worker starts no task, and no queue claim takes an item (the claim
// statements carry NO_RESTORE_MARKER, so a claim that runs after the marker committed takes nothing).
import type { Queryable } from './db/db.ts';

/** SQL condition, true while no restore marker is set; for the WHERE clause of a claim. */
export const NO_RESTORE_MARKER = 'not exists (select 1 from restore_marker)';

/** Why the worker refuses to start, in the words an operator reads on the terminal. */
export const RESTORE_PENDING_REFUSAL =
  'the restore marker is set: this database was restored and is not reconciled yet, so the worker does not start (reconcile it with identity-cli restore-reconcile)';

/** Whether the marker is set. A schema from before the marker's table has none. */
export async function restoreMarkerSet(q: Queryable): Promise<boolean> {
  try {
    return (await q.query('select 1 from restore_marker')).rows.length > 0;
  } catch (e) {
    if ((e as { code?: string }).code === '42P01') return false;
    throw e;
  }
}
