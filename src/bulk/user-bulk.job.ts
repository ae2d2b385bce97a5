// The user.bulk job (spec doc 2, Jobs and exports; docs/user-bulk.md): queued by
// POST /user-bulk-actions, run by the worker account by account. The permission of the action is
// re-checked on the requester before the first account and again every 100 accounts (the batch
// size of document 2, Limits); a requester who lost it dead-letters the job, keeping what was
// already changed. The result is a report of every account's outcome, downloadable like an export.
import { authorityLost, type JobType, lostPermissionError, permanentFailure } from '../jobs/index.ts';
import type { Actor } from '../kernel/call.ts';
import type { Clock } from '../platform/clock.ts';
import type { Db, Queryable } from '../platform/db/db.ts';
import { tryDecode } from '../platform/http/decode.ts';
import type { Delegator } from '../roles/delegator.ts';
import { standingOf } from '../roles/index.ts';
import { type AccountOutcome, applyToAccount } from './user-bulk.apply.ts';
import {
  type BulkRequest,
  bulkPermission,
  bulkRequestProblems,
  decodeBulkRequest,
} from './user-bulk.format.ts';

export const USER_BULK_REPORT_FORMAT = 'service.user-bulk-report.v1';
/** Accounts between two re-checks of the requester's authority. */
const RECHECK_EVERY = 100;

export interface UserBulkDeps {
  db: Db;
  clock: Clock;
}

/** The requester as a delegator when it still holds the action's permission; null otherwise. */
export async function requesterWithAuthority(
  q: Queryable,
  realmId: string,
  requester: Actor,
  r: BulkRequest,
  now: Date,
): Promise<Delegator | null> {
  const need = bulkPermission(r);
  const standing = await standingOf(q, realmId, requester, need.organizationId, now);
  if (!standing.active || !standing.permissions.has(need.permission)) return null;
  if (requester.type !== 'user' && requester.type !== 'service_principal') return null;
  // A job runs without the requester's session: its standing, not a session's assurance, counts.
  return {
    kind: requester.type,
    id: requester.id as string,
    permissions: standing.permissions,
    sessionMfa: true,
    authTime: null,
  };
}

export const userBulkJob: JobType<UserBulkDeps> = {
  name: 'user.bulk',
  // Which permission depends on the action; run() checks it (spec doc 2: per action).
  permission: null,
  async run(deps, job) {
    const decoded = tryDecode(decodeBulkRequest, job.params);
    if (!decoded.ok || bulkRequestProblems(decoded.value).length > 0)
      return permanentFailure('the stored bulk request does not decode');
    const r = decoded.value;
    const lost = authorityLost(lostPermissionError(bulkPermission(r).permission));
    let requester = await requesterWithAuthority(deps.db, job.realmId, job.requester, r, deps.clock.now());
    if (!requester) return lost;
    const outcomes: AccountOutcome[] = [];
    for (const [i, userId] of r.userIds.entries()) {
      const now = deps.clock.now();
      if (i > 0 && i % RECHECK_EVERY === 0) {
        await job.progress('users', i);
        requester = await requesterWithAuthority(deps.db, job.realmId, job.requester, r, now);
        if (!requester) return lost;
      }
      // The requester is the actor of every change; the job id correlates them (docs/decisions.md).
      const call = { realmId: job.realmId, actor: job.requester, correlationId: job.id, now };
      outcomes.push(await applyToAccount({ db: deps.db, call, requester }, r, userId));
    }
    await job.progress('users', r.userIds.length);
    const counts = { changed: 0, unchanged: 0, refused: 0 };
    for (const o of outcomes) counts[o.outcome]++;
    const report = { format: USER_BULK_REPORT_FORMAT, action: r.action, counts, accounts: outcomes };
    return { kind: 'file', format: 'json', body: JSON.stringify(report), counts };
  },
};
