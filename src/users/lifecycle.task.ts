// Worker task lifecycle.users (document 2 "Lifecycle rules", every 10 minutes under the task's
// lease): for every active realm, each of the four rules in lifecycle.rules.ts takes up to 100
// accounts (document 1, Limits: "Lifecycle job"). Each account is locked, re-checked against its
// rule and changed in a transaction of its own, with actor system; an account or a realm that
// fails is counted and logged, and the run goes on with the next one.
import { inChange, type Recorder } from '../audit/index.ts';
import { type Call, systemCall } from '../kernel/call.ts';
import type { TaskReport } from '../kernel/task.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import type { Logger } from '../platform/log.ts';
import { endAccountSessions } from '../sessions/index.ts';
import { eraseAccount } from './account-erasure.ts';
import {
  dueAccounts,
  LIFECYCLE_BATCH,
  LIFECYCLE_RULES,
  type LifecycleRule,
  type LifecycleSettings,
  lifecycleSettings,
  lockIfStillDue,
} from './lifecycle.rules.ts';
import { changeAccountStateInTx } from './users.admin.ts';
import { flagDormant, setScheduledDeactivation } from './users.repo.ts';
import { userSubject } from './users.service.ts';

export interface LifecycleDeps {
  db: Db;
  log?: Logger;
}

interface LifecycleReport extends TaskReport {
  erased: number;
  dormant_reported: number;
  suspended: number;
  /** Selected but no longer due when re-checked under the lock. */
  skipped: number;
  failed_accounts: number;
  failed_realms: number;
}

type Outcome = 'erased' | 'dormant_reported' | 'suspended' | 'skipped';

export async function runLifecycleRules(deps: LifecycleDeps, now: Date): Promise<LifecycleReport> {
  const report: LifecycleReport = {
    erased: 0,
    dormant_reported: 0,
    suspended: 0,
    skipped: 0,
    failed_accounts: 0,
    failed_realms: 0,
  };
  const realms = await deps.db.query<{ id: string }>(
    `select id from realms where state = 'active' order by id`,
  );
  for (const { id: realmId } of realms.rows) {
    try {
      await runRealm(deps, realmId, now, report);
    } catch (err) {
      report.failed_realms++;
      deps.log?.error(
        { task: 'lifecycle.users', realm_id: realmId, err },
        'lifecycle rules failed for a realm',
      );
    }
  }
  return report;
}

async function runRealm(deps: LifecycleDeps, realmId: string, now: Date, report: LifecycleReport) {
  const settings = await lifecycleSettings(deps.db, realmId);
  for (const rule of LIFECYCLE_RULES) {
    const due = await dueAccounts(deps.db, realmId, rule, settings, now, LIFECYCLE_BATCH);
    for (const userId of due) {
      try {
        report[await applyRule(deps.db, realmId, userId, rule, settings, now)]++;
      } catch (err) {
        report.failed_accounts++;
        deps.log?.error(
          { task: 'lifecycle.users', realm_id: realmId, user_id: userId, rule: rule.name, err },
          'a lifecycle rule failed for an account',
        );
      }
    }
  }
}

async function applyRule(
  db: Db,
  realmId: string,
  userId: string,
  rule: LifecycleRule,
  settings: LifecycleSettings,
  now: Date,
): Promise<Outcome> {
  const call = systemCall(realmId, now);
  return inChange(db, call, async (tx, record) => {
    if (!(await lockIfStillDue(tx, realmId, userId, rule, settings, now))) return 'skipped';
    const action = rule.action(settings);
    if (action === 'delete') {
      await erase(tx, record, call, userId, rule.reason);
      return 'erased';
    }
    if (rule.name === 'dormant') {
      await flagDormant(tx, realmId, userId, now);
      await record.audit('user.dormant_detected', {
        category: 'identity',
        subject: userSubject(userId),
        reason: 'dormant',
        data: { dormant_days: settings.dormantDays, action },
      });
      if (action === 'report') return 'dormant_reported';
    } else {
      await setScheduledDeactivation(tx, realmId, userId, null, now);
    }
    await changeAccountStateInTx(tx, record, adminCallOf(call, userId), userId, 'suspend', rule.reason);
    return 'suspended';
  });
}

/** Revocation records need a correlation id: the worker run's, or one naming the task. */
const adminCallOf = (call: Call, userId: string) => ({
  ...call,
  correlationId: call.correlationId ?? `lifecycle-${userId}`,
});

async function erase(tx: Tx, record: Recorder, call: Call, userId: string, reason: string) {
  const { correlationId } = adminCallOf(call, userId);
  await endAccountSessions(tx, call.realmId, userId, 'user_deleted', call.now, correlationId);
  await eraseAccount(tx, call.realmId, userId, call.now);
  await record.audit('user.deleted', {
    category: 'identity',
    subject: userSubject(userId),
    reason,
    data: { reason },
  });
  await record.event('user.deleted', { user_id: userId });
}
