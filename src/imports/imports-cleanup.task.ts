// Worker task imports.cleanup (docs/migration.md, Retention): a user import's report is kept for
// privacy.export_retention after its job finished, like a job's file; a row whose job never ran
// (its requester lost the permission, or the job failed) goes a week after it was made, taking the
// sealed document with its password verifiers and TOTP seeds.
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { deleteOldUserImports } from './user-imports.repo.ts';

export const STALE_IMPORT_MS = 7 * 24 * 3600_000;

export interface ImportsCleanupDeps {
  db: Db;
  exportRetentionMs: number;
}

export async function cleanupImports(deps: ImportsCleanupDeps, now: Date): Promise<TaskReport> {
  const deleted = await deps.db.tx((tx) =>
    deleteOldUserImports(tx, now, deps.exportRetentionMs, STALE_IMPORT_MS),
  );
  return { deleted };
}
