// Worker task session_events.prune (document 1, Limits: the stream keeps 7 days): events older than
// that go, in batches, and each realm's horizon moves with them, so a cursor from before the cut
// answers 410 cursor_expired instead of silently skipping what was pruned.
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { pruneSessionEvents } from './session-events.repo.ts';

export const SESSION_EVENT_RETENTION_MS = 7 * 24 * 3600 * 1000;
const BATCH = 1000;
const MAX_BATCHES = 20;

export async function pruneSessionEventsTask(deps: { db: Db }, now: Date): Promise<TaskReport> {
  const before = new Date(now.getTime() - SESSION_EVENT_RETENTION_MS);
  let pruned = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await deps.db.tx((tx) => pruneSessionEvents(tx, before, BATCH));
    pruned += n;
    if (n < BATCH) break;
  }
  return { pruned };
}
