// Worker tasks for the transactional outbox (spec doc 2, Events and Data lifecycle 3).
// outbox.dispatch hands each committed event to its destinations and marks it dispatched; the
// webhook fan-out joins this transaction when subscriptions exist. outbox.cleanup deletes
// dispatched events after seven days.

import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';

export const DISPATCH_BATCH = 500;
export const DISPATCHED_RETENTION_MS = 7 * 24 * 3600 * 1000;
const CLEANUP_BATCH = 5000;

export async function dispatchOutbox(deps: { db: Db }, now: Date): Promise<TaskReport> {
  let dispatched = 0;
  for (;;) {
    const n = await deps.db.tx(async (tx) => {
      // SKIP LOCKED lets several workers drain the outbox side by side without waiting on each other.
      const r = await tx.query(
        `with due as (
           select realm_id, id from outbox where dispatched_at is null
            order by occurred_at limit ${DISPATCH_BATCH} for update skip locked)
         update outbox o set dispatched_at = $1 from due
          where o.realm_id = due.realm_id and o.id = due.id`,
        [now],
      );
      return r.rowCount;
    });
    dispatched += n;
    if (n < DISPATCH_BATCH) return { dispatched };
  }
}

export async function cleanupOutbox(deps: { db: Db }, now: Date): Promise<TaskReport> {
  const r = await deps.db.query(
    `delete from outbox where (realm_id, id) in (
       select realm_id, id from outbox where dispatched_at < $1 limit ${CLEANUP_BATCH})`,
    [new Date(now.getTime() - DISPATCHED_RETENTION_MS)],
  );
  return { deleted: r.rowCount };
}
