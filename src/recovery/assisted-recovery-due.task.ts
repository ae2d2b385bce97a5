// Worker task recovery.assisted_due (document 1 "Assisted recovery request": every minute, under
// the task's lease so one worker runs it at a time): each open request with something to do is
// settled in its own transaction (assisted-recovery.service.ts, settleDueRecovery). One failing
// request is logged and counted, and never stops the others.
import type { TaskReport } from '../kernel/task.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import type { Logger } from '../platform/log.ts';
import { dueRecoveries } from './assisted-recoveries.repo.ts';
import { settleDueRecovery } from './assisted-recovery.service.ts';

/** Requests settled per run at most; the rest wait a minute. */
export const DUE_BATCH = 100;

export interface RecoveryDueDeps {
  db: Db;
  keyring: RootKeyring;
  publicOrigin: string;
  log?: Logger;
}

export async function runAssistedRecoveriesDue(deps: RecoveryDueDeps, now: Date): Promise<TaskReport> {
  const report: TaskReport = {
    executed: 0,
    expired: 0,
    account_unavailable: 0,
    requester_no_longer_authorized: 0,
    contact_unverified: 0,
    failed: 0,
  };
  for (const due of await dueRecoveries(deps.db, now, DUE_BATCH)) {
    try {
      const outcome = await settleDueRecovery(deps, due.realm_id, due.id, now);
      if (outcome !== 'not_due') report[outcome] = (report[outcome] ?? 0) + 1;
    } catch (err) {
      report.failed = (report.failed ?? 0) + 1;
      deps.log?.warn({ recovery: due.id, err: String(err) }, 'an assisted recovery could not be settled');
    }
  }
  return report;
}
