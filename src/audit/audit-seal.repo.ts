// SQL of sealing and verifying audit evidence (docs/audit.md, Sealing).
import type { Queryable, Tx } from '../platform/db/db.ts';
import type { HashedEventRow } from './audit-hash.ts';

const EVENT_COLUMNS = `id, realm_id, occurred_at, type, category, outcome, actor_type, actor_id, subject_type,
  subject_id, target_type, target_id, org_id, correlation_id, signal, reason, corrects_event_id, data`;

export interface BatchRow {
  id: string;
  seq: string | number;
  sealed_at: Date;
  first_occurred_at: Date;
  last_occurred_at: Date;
  event_count: number;
  events_hash: string;
  previous_hash: string | null;
  batch_hash: string;
  pruned_count: number;
  archived_at: Date | null;
}

export interface SealedEventRow extends HashedEventRow {
  content_hash: string | null;
  batch_id: string | null;
}

/** The oldest unsealed events, locked so that a second sealer skips them. */
export const claimUnsealed = (tx: Tx, limit: number) =>
  tx.query<HashedEventRow>(
    `select ${EVENT_COLUMNS} from audit_events where batch_id is null
      order by occurred_at, id limit ${limit} for update skip locked`,
  );

export async function lastBatch(q: Queryable): Promise<BatchRow | null> {
  const r = await q.query<BatchRow>('select * from audit_batches order by seq desc limit 1');
  return r.rows[0] ?? null;
}

export async function insertBatch(
  tx: Tx,
  b: Omit<BatchRow, 'pruned_count' | 'archived_at'>,
  hashes: { ids: string[]; contentHashes: string[] },
): Promise<void> {
  await tx.query(
    `insert into audit_batches (id, seq, sealed_at, first_occurred_at, last_occurred_at, event_count,
       events_hash, previous_hash, batch_hash)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      b.id,
      b.seq,
      b.sealed_at,
      b.first_occurred_at,
      b.last_occurred_at,
      b.event_count,
      b.events_hash,
      b.previous_hash,
      b.batch_hash,
    ],
  );
  await tx.query(
    `update audit_events e set batch_id = $1, content_hash = x.h
       from unnest($2::text[], $3::text[]) as x(id, h) where e.id = x.id`,
    [b.id, hashes.ids, hashes.contentHashes],
  );
}

/** The newest `count` batches, oldest first, plus the one before them (its hash links the first). */
export async function newestBatches(q: Queryable, count: number): Promise<BatchRow[]> {
  const r = await q.query<BatchRow>(
    `select * from (select * from audit_batches order by seq desc limit ${count + 1}) b order by seq`,
  );
  return r.rows;
}

export async function batchBySeq(q: Queryable, seq: number): Promise<BatchRow | null> {
  const r = await q.query<BatchRow>('select * from audit_batches where seq = $1', [seq]);
  return r.rows[0] ?? null;
}

/**
 * How many batches that no longer exist are still named by sealed events, among batches sealed
 * since `sinceBatchId` (batch ids are time-ordered ULIDs, so the time part bounds an index range).
 * Batches are never deleted (retention deletes events and keeps the batch row).
 */
export async function countOrphanedBatches(q: Queryable, sinceBatchId: string): Promise<number> {
  const r = await q.query<{ n: string }>(
    `select count(distinct e.batch_id) as n from audit_events e
      where e.batch_id >= $1 and not exists (select 1 from audit_batches b where b.id = e.batch_id)`,
    [sinceBatchId.slice(0, 'aub_'.length + 10)],
  );
  return Number(r.rows[0]?.n ?? 0);
}

export const batchEvents = (q: Queryable, batchId: string) =>
  q.query<SealedEventRow>(
    `select ${EVENT_COLUMNS}, content_hash, batch_id from audit_events where batch_id = $1
      order by occurred_at, id`,
    [batchId],
  );

export interface UnsealedState {
  count: number;
  oldestSeconds: number;
}

export async function unsealedState(q: Queryable, now: Date): Promise<UnsealedState> {
  const r = await q.query<{ n: string; oldest: Date | null }>(
    'select count(*) as n, min(occurred_at) as oldest from audit_events where batch_id is null',
  );
  const row = r.rows[0];
  const oldest = row?.oldest ? new Date(row.oldest).getTime() : null;
  return {
    count: Number(row?.n ?? 0),
    oldestSeconds: oldest === null ? 0 : Math.max(0, Math.floor((now.getTime() - oldest) / 1000)),
  };
}

/** Sealed batches not archived yet, oldest first. */
export const unarchivedBatches = (q: Queryable, limit: number) =>
  q.query<BatchRow>(`select * from audit_batches where archived_at is null order by seq limit ${limit}`);

export async function markArchived(q: Queryable, batchId: string, now: Date): Promise<void> {
  await q.query('update audit_batches set archived_at = $2 where id = $1 and archived_at is null', [
    batchId,
    now,
  ]);
}
