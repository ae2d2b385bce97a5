// Account-state effects of second factors (spec doc 1, "Account states"): a recovery-code sign-in
// restricts the account; a strong factor restores it. Each change is audited and published. A
// factor enrolled during a sign-in mails the account when notifications.factor_changed is on.
import { noticeFactorChanged } from '../../mfa/index.ts';
import { localeOf } from '../../notifications/index.ts';
import type { Tx } from '../../platform/db/db.ts';
import { setUserState } from '../../users/index.ts';
import type { SigninTx } from '../transaction.ts';
import { type StepContext, stepActor, stepRecorder } from './step.ts';

async function changeState(
  q: Tx,
  ctx: StepContext,
  userId: string,
  to: 'recovery_restricted' | 'active',
  reason: string,
): Promise<void> {
  const realmId = ctx.realm.id;
  await setUserState(q, realmId, userId, to, ctx.now);
  const type = to === 'active' ? 'user.reactivated' : 'user.recovery_restricted';
  const record = stepRecorder(q, realmId, ctx, stepActor(userId));
  await record.audit(type, {
    category: 'security',
    subject: { type: 'user', id: userId },
    reason,
    ...(to === 'recovery_restricted' ? { signal: 'factor_recovery' as const } : {}),
    data: { state: to },
  });
  await record.event(type, { user_id: userId, state: to, reason });
}

export async function restrictAfterRecoveryCode(q: Tx, ctx: StepContext, userId: string): Promise<void> {
  if (ctx.facts.user?.state === 'active')
    await changeState(q, ctx, userId, 'recovery_restricted', 'RECOVERY_CODE_USED');
}

/** `state`: the account's state when the facts were loaded before the account was known. */
export async function restoreAfterStrongFactor(
  q: Tx,
  ctx: StepContext,
  userId: string,
  state = ctx.facts.user?.state,
): Promise<void> {
  if (state === 'recovery_restricted') {
    await changeState(q, ctx, userId, 'active', 'FACTOR_ASSURANCE_RESTORED');
  }
}

/** notifications.factor_changed for a factor enrolled during a sign-in (mfa/factor-notice.ts). */
export async function mailFactorAdded(
  q: Tx,
  t: SigninTx,
  ctx: StepContext,
  factor: 'totp' | 'webauthn',
): Promise<void> {
  const notice = {
    factor,
    change: 'added',
    to: ctx.facts.user?.email ?? null,
    locale: localeOf(t.uiLocales),
  } as const;
  await noticeFactorChanged(q, ctx.app, ctx.realm, ctx.policy, notice, ctx.now);
}
