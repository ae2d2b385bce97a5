// Worker tasks that make audit evidence tamper-evident (docs/audit.md, Sealing): audit.seal puts
// unsealed events into hash-chained batches; audit.verify_recent re-computes the newest 200
// batches and reports how many no longer match (service_audit_integrity_problems).
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { batchHash, contentHash, eventsHash } from './audit-hash.ts';
import {
  type BatchRow,
  batchEvents,
  claimUnsealed,
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

/** What is wrong with one batch, or null when it verifies. */
export async function batchProblem(db: Db, b: BatchRow, previous: BatchRow | null): Promise<string | null> {
  const link = {
    seq: Number(b.seq),
    previousHash: b.previous_hash,
    eventsHash: b.events_hash,
    eventCount: b.event_count,
  };
  if (batchHash(link) !== b.batch_hash) return 'batch hash does not match its fields';
  if (previous && Number(previous.seq) === link.seq - 1 && b.previous_hash !== previous.batch_hash)
    return 'previous hash does not link to the batch before';
  if (previous && Number(previous.seq) !== link.seq - 1) return 'a batch is missing from the chain';
  const rows = (await batchEvents(db, b.id)).rows;
  if (rows.length !== b.event_count - b.pruned_count) return 'events are missing from the batch';
  const hashes = rows.map(contentHash);
  if (rows.some((r, i) => r.content_hash !== hashes[i])) return 'an event changed after sealing';
  if (b.pruned_count === 0 && eventsHash(hashes) !== b.events_hash) return 'events hash does not match';
  return null;
}

export interface IntegrityReport {
  checked: number;
  problems: number;
}

export async function verifyRecentAudit(deps: { db: Db }): Promise<IntegrityReport> {
  const rows = await newestBatches(deps.db, VERIFY_BATCHES);
  // The first row is the link below the newest 200 when there are more than 200.
  const start = rows.length > VERIFY_BATCHES ? 1 : 0;
  let problems = 0;
  for (let i = start; i < rows.length; i++) {
    const b = rows[i] as BatchRow;
    if ((await batchProblem(deps.db, b, rows[i - 1] ?? null)) !== null) problems += 1;
  }
  return { checked: rows.length - start, problems };
}
