// Worker task federation_transfers.cleanup (spec doc 2, Data lifecycle and retention 3; doc 1,
// Limits): the entries of a transfer go 180 days after it was applied or cancelled. The transfer
// row, with its summary and who asked and approved, stays as the record of the change.
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { pruneEndedEntries } from './transfers.repo.ts';

export const TRANSFER_ENTRY_RETENTION_MS = 180 * 86_400_000;
const BATCH = 5000;

export async function cleanupTransferEntries(deps: { db: Db }, now: Date): Promise<TaskReport> {
  const before = new Date(now.getTime() - TRANSFER_ENTRY_RETENTION_MS);
  return { deleted: await pruneEndedEntries(deps.db, before, BATCH) };
}
