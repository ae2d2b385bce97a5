// Worker tasks that make audit evidence tamper-evident (docs/audit.md, Sealing): audit.seal puts
// unsealed events into hash-chained batches; audit.verify_recent re-computes the newest 200
// batches, looks for gaps, and reports the problems it finds (service_audit_integrity_problems).
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { newestArchivedBatch } from './audit-archive-verify.ts';
import { type ChainBatch, type ChainProblem, eventsProblem, linkProblem } from './audit-chain.ts';
import { batchHash, contentHash, eventsHash } from './audit-hash.ts';
import {
  type BatchRow,
  batchBySeq,
  batchEvents,
  claimUnsealed,
  countOrphanedBatches,
  insertBatch,
  lastBatch,
  newestBatches,
} from './audit-seal.repo.ts';

export const SEAL_BATCH_SIZE = 500;
/** Batches sealed per run at most; the rest wait for the next run. */
const SEAL_BATCHES_PER_RUN = 20;
export const VERIFY_BATCHES = 200;

export async function sealAudit(deps: { db: Db }, now: Date): Promise<TaskReport> {
  let batches = 0;
  let events = 0;
  while (batches < SEAL_BATCHES_PER_RUN) {
    const sealed = await deps.db.tx(async (tx) => {
      const rows = (await claimUnsealed(tx, SEAL_BATCH_SIZE)).rows;
      const first = rows[0];
      const last = rows.at(-1);
      if (!first || !last) return 0;
      const previous = await lastBatch(tx);
      const seq = previous ? Number(previous.seq) + 1 : 1;
      const contentHashes = rows.map(contentHash);
      const link = {
        seq,
        previousHash: previous?.batch_hash ?? null,
        eventsHash: eventsHash(contentHashes),
        eventCount: rows.length,
      };
      await insertBatch(
        tx,
        {
          id: newId('aub', now.getTime()),
          seq,
          sealed_at: now,
          first_occurred_at: first.occurred_at,
          last_occurred_at: last.occurred_at,
          event_count: rows.length,
          events_hash: link.eventsHash,
          previous_hash: link.previousHash,
          batch_hash: batchHash(link),
        },
        { ids: rows.map((r) => r.id), contentHashes },
      );
      return rows.length;
    });
    if (sealed === 0) break;
    batches += 1;
    events += sealed;
    if (sealed < SEAL_BATCH_SIZE) break;
  }
  return { batches, events };
}

/** What is wrong with one batch and its link to the batch read before it, or null. */
export async function batchProblem(
  db: Db,
  b: BatchRow,
  previous: BatchRow | null,
): Promise<ChainProblem | null> {
  const link = linkProblem(chainBatch(b), previous ? chainBatch(previous) : null);
  if (link) return link;
  const events = (await batchEvents(db, b.id)).rows.map((e) => ({
    id: e.id,
    storedHash: e.content_hash,
    computedHash: contentHash(e),
  }));
  return eventsProblem(chainBatch(b), events, b.pruned_count);
}

const chainBatch = (b: BatchRow): ChainBatch => ({ ...b, seq: Number(b.seq) });

export interface IntegrityReport {
  checked: number;
  problems: number;
}

/**
 * A batch the archive holds that the database lacks, or holds with another hash: the newest
 * batches were deleted (and sealing carried on from the one before), which nothing in the
 * database itself can show once their events are gone too.
 */
async function archiveAhead(db: Db, dir: string | null): Promise<boolean> {
  if (!dir) return false;
  const newest = await newestArchivedBatch(dir).catch(() => null);
  if (!newest) return false;
  const stored = await batchBySeq(db, newest.seq);
  return stored?.batch_hash !== newest.batch_hash;
}

/**
 * The newest 200 batches: each batch's hash, its link to the one before (from seq 1 when there
 * are no more), its events; events sealed into a batch that no longer exists; and, with an
 * archive, the archive's newest batch still in the database. Each failing batch, each missing
 * batch its events still name, and an archive ahead of the database count as one problem.
 */
export async function verifyRecentAudit(deps: {
  db: Db;
  auditArchiveDir?: string | null;
}): Promise<IntegrityReport> {
  const rows = await newestBatches(deps.db, VERIFY_BATCHES);
  // The first row is the link below the newest 200 when there are more than 200.
  const start = rows.length > VERIFY_BATCHES ? 1 : 0;
  let problems = 0;
  for (let i = start; i < rows.length; i++) {
    const b = rows[i] as BatchRow;
    if ((await batchProblem(deps.db, b, rows[i - 1] ?? null)) !== null) problems += 1;
  }
  const oldest = rows[start];
  if (oldest) problems += await countOrphanedBatches(deps.db, oldest.id);
  if (await archiveAhead(deps.db, deps.auditArchiveDir ?? null)) problems += 1;
  return { checked: rows.length - start, problems };
}
