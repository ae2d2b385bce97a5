// Lifecycle administration (document 1 "Recovery and account administration"): scheduling and
// cancelling an account's deactivation, which the scheduled_deactivation rule carries out, and the
// dry-run preview of what the next lifecycle.users run would change.
import { inChange } from '../audit/index.ts';
import type { Db } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import {
  countDue,
  dueAccounts,
  LIFECYCLE_BATCH,
  LIFECYCLE_RULES,
  type LifecycleAction,
  type LifecycleRuleName,
  lifecycleSettings,
} from './lifecycle.rules.ts';
import { lockUser, setScheduledDeactivation } from './users.repo.ts';
import { type AdminCall, userSubject } from './users.service.ts';

export interface ScheduledDeactivation {
  userId: string;
  at: Date;
  reason: string;
}

/** decision D13's rule extends to a deactivation: an administrator does not schedule their own. */
function refuseSelf(call: AdminCall, userId: string): void {
  if (call.actor.type === 'user' && call.actor.id === userId) {
    throw problem.forbidden('administrators cannot schedule the deactivation of their own account');
  }
}

/** PUT /users/{user}/scheduled-deactivation: sets or moves the date; the last call wins. */
export async function scheduleDeactivation(
  db: Db,
  call: AdminCall,
  userId: string,
  input: { at: Date; reason: string },
): Promise<ScheduledDeactivation> {
  refuseSelf(call, userId);
  return inChange(db, call, async (tx, record) => {
    const user = await lockUser(tx, call.realmId, userId);
    if (!user) throw problem.notFound('no such user');
    await setScheduledDeactivation(tx, call.realmId, userId, input, call.now);
    const before = user.deactivate_at ?? null;
    await record.audit('user.deactivation_scheduled', {
      category: 'identity',
      subject: userSubject(userId),
      reason: input.reason,
      data: {
        at: input.at.toISOString(),
        previous_at: before === null ? null : new Date(before).toISOString(),
        state: user.state,
      },
    });
    return { userId, at: input.at, reason: input.reason };
  });
}

/** DELETE /users/{user}/scheduled-deactivation: 404 when none is scheduled. */
export async function cancelDeactivation(db: Db, call: AdminCall, userId: string): Promise<void> {
  refuseSelf(call, userId);
  await inChange(db, call, async (tx, record) => {
    const user = await lockUser(tx, call.realmId, userId);
    if (!user) throw problem.notFound('no such user');
    const at = user.deactivate_at ?? null;
    if (at === null) throw problem.notFound('no deactivation is scheduled for this account');
    await setScheduledDeactivation(tx, call.realmId, userId, null, call.now);
    await record.audit('user.deactivation_cancelled', {
      category: 'identity',
      subject: userSubject(userId),
      data: { at: new Date(at).toISOString() },
    });
  });
}

export interface LifecyclePreview {
  batchSize: number;
  rules: { name: LifecycleRuleName; action: LifecycleAction; due: number; sampleUserIds: string[] }[];
}

/** Up to 20 sample accounts per rule (document 1, GET /lifecycle/preview). */
const SAMPLE = 20;

/** GET /lifecycle/preview: what each rule selects now, changing nothing. */
export async function previewLifecycle(db: Db, call: AdminCall): Promise<LifecyclePreview> {
  const settings = await lifecycleSettings(db, call.realmId);
  const rules = [];
  for (const rule of LIFECYCLE_RULES) {
    rules.push({
      name: rule.name,
      action: rule.action(settings),
      due: await countDue(db, call.realmId, rule, settings, call.now),
      sampleUserIds: await dueAccounts(db, call.realmId, rule, settings, call.now, SAMPLE),
    });
  }
  return { batchSize: LIFECYCLE_BATCH, rules };
}
