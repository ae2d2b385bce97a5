// Task access_reviews.close (docs/access-reviews.md): every 30 seconds, up to 20 campaigns that
// reached their end or were closed early (document 2, Limits, "Access reviews"). Each removal is
// made by the owning context's own change, in its own transaction with its audit record and
// events, as the system; an item records its outcome as soon as it is handled, so a run cut short
// resumes where it stopped. The campaign closes, with its counts and audit record, in one
// transaction once every item has an outcome. One failing campaign never stops the others.
import { inChange } from '../audit/index.ts';
import { SYSTEM_ACTOR, systemCall } from '../kernel/call.ts';
import type { TaskReport } from '../kernel/task.ts';
import { leaveFromDirectory } from '../organizations/index.ts';
import type { Db } from '../platform/db/db.ts';
import { Problem } from '../platform/http/problem.ts';
import type { Logger } from '../platform/log.ts';
import { unassignRole } from '../roles/index.ts';
import {
  closeReview,
  dueReviews,
  findReview,
  type ItemRow,
  outcomeCounts,
  pendingItems,
  type ReviewRow,
  setOutcome,
} from './access-reviews.repo.ts';

export const CLOSES_PER_RUN = 20;
const BATCH = 200;

export interface ReviewCloseDeps {
  db: Db;
  log?: Logger;
}

/** What happens to one item: kept, removed, or already gone (the access ended meanwhile). */
async function applyItem(db: Db, r: ReviewRow, realmId: string, item: ItemRow, now: Date): Promise<string> {
  const decision = item.decision ?? r.default_decision;
  if (decision === 'keep') return item.decision === null ? 'kept_by_default' : 'kept';
  const call = systemCall(realmId, now);
  try {
    if (r.scope_type === 'role') {
      // The system removes what the reviewers decided; it holds the authority a close needs.
      await unassignRole(
        db,
        {
          ...call,
          correlationId: r.id,
          caller: {
            kind: 'service_principal',
            id: SYSTEM_ACTOR.id ?? 'system',
            permissions: new Set(['realm.roles.write']),
            sessionMfa: true,
            authTime: null,
          },
        },
        { kind: 'realm' },
        item.target_id,
      );
    } else {
      await inChange(db, { ...call, correlationId: r.id }, (tx) =>
        leaveFromDirectory(tx, { ...call, correlationId: r.id }, r.scope_id, item.user_id, 'access_review'),
      );
    }
    return item.decision === null ? 'removed_by_default' : 'removed';
  } catch (e) {
    if (e instanceof Problem && e.status === 404) return 'gone';
    if (e instanceof Problem && e.status === 409) return `refused: ${e.detail ?? e.code}`.slice(0, 200);
    throw e;
  }
}

async function closeOne(deps: ReviewCloseDeps, realmId: string, id: string, now: Date): Promise<void> {
  const r = await findReview(deps.db, realmId, id);
  if (!r || r.state === 'closed') return;
  for (;;) {
    const batch = await pendingItems(deps.db, realmId, id, BATCH);
    if (batch.length === 0) break;
    for (const item of batch)
      await setOutcome(deps.db, realmId, id, item.target_id, await applyItem(deps.db, r, realmId, item, now));
  }
  await inChange(deps.db, { ...systemCall(realmId, now), correlationId: id }, async (tx, record) => {
    const counts = await outcomeCounts(tx, realmId, id);
    await closeReview(tx, realmId, id, counts, now);
    await record.audit('access_review.closed', {
      category: 'security',
      target: { type: 'access_review', id },
      data: { name: r.name, scope_type: r.scope_type, scope_id: r.scope_id, result: counts },
    });
  });
}

export async function closeDueReviews(deps: ReviewCloseDeps, now: Date): Promise<TaskReport> {
  // One worker holds the task's lease, so no other closes the same campaign meanwhile.
  const due = await dueReviews(deps.db, now, CLOSES_PER_RUN);
  let closed = 0;
  let failed = 0;
  for (const r of due) {
    try {
      await closeOne(deps, r.realm_id, r.id, now);
      closed++;
    } catch (e) {
      failed++;
      deps.log?.warn(
        { err: (e as Error).message, review: r.id },
        'access review close failed; tried again next run',
      );
    }
  }
  return { closed, failed };
}
