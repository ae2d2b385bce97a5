// Worker tasks of the jobs context: running due jobs (every worker, each job under its own lease)
// and purging results past privacy.export_retention (spec doc 2, Export retention).
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { JobRunner, type JobRunnerDeps } from './job-runner.ts';
import type { JobType } from './job-type.ts';
import { deleteOldDownloadTokens, purgeExpiredResults } from './jobs.repo.ts';

/** Jobs one tick of one worker runs at most; the rest wait for the next tick. */
const JOBS_PER_TICK = 10;
const PURGE_BATCH = 500;
const DAY_MS = 24 * 3_600_000;

export function runJobsTask<D extends JobRunnerDeps>(types: readonly JobType<D>[], holder: string) {
  return (deps: D, _now: Date): Promise<TaskReport> =>
    new JobRunner(deps, types, { holder }).runDue(JOBS_PER_TICK);
}

export async function purgeJobResults(deps: { db: Db }, now: Date): Promise<TaskReport> {
  let purged = 0;
  for (;;) {
    const n = await purgeExpiredResults(deps.db, now, PURGE_BATCH);
    purged += n;
    if (n < PURGE_BATCH) break;
  }
  const tokens = await deleteOldDownloadTokens(deps.db, new Date(now.getTime() - DAY_MS), PURGE_BATCH);
  return { results_purged: purged, download_tokens_deleted: tokens };
}
