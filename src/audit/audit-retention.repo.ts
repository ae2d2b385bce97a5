// SQL of audit retention (docs/audit.md, Retention): the batches to look at, their events, the
// realm's active legal holds, and the deletion that keeps each batch's pruned count.
import type { Queryable, Tx } from '../platform/db/db.ts';
import type { BatchRow } from './audit-seal.repo.ts';

export interface RetentionEventRow {
  id: string;
  realm_id: string | null;
  org_id: string | null;
  category: string;
  occurred_at: Date;
  actor_id: string | null;
  subject_id: string | null;
  target_id: string | null;
}

/**
 * Sealed batches that still hold events and whose first event is older than `before`, the ones
 * looked at longest ago first (so batches kept by a hold or the emergency category do not stall
 * the rest). With `archivedOnly`, batches not archived yet are not candidates.
 */
export const retentionCandidates = (q: Queryable, before: Date, archivedOnly: boolean, limit: number) =>
  q.query<BatchRow>(
    `select * from audit_batches
      where pruned_count < event_count and first_occurred_at < $1
        ${archivedOnly ? 'and archived_at is not null' : ''}
      order by retention_checked_at nulls first, seq limit ${limit}`,
    [before],
  );

export const retentionEvents = (q: Queryable, batchId: string) =>
  q.query<RetentionEventRow>(
    `select id, realm_id, org_id, category, occurred_at, actor_id, subject_id, target_id
       from audit_events where batch_id = $1`,
    [batchId],
  );

export async function pruneBatchEvents(
  tx: Tx,
  batchId: string,
  ids: readonly string[],
  now: Date,
): Promise<number> {
  const deleted =
    ids.length === 0
      ? 0
      : (
          await tx.query('delete from audit_events where batch_id = $1 and id = any($2::text[])', [
            batchId,
            ids,
          ])
        ).rowCount;
  await tx.query(
    'update audit_batches set pruned_count = pruned_count + $2, retention_checked_at = $3 where id = $1',
    [batchId, deleted, now],
  );
  return deleted;
}
