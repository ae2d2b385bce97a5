// recovery-code {code}: a single-use code in place of the authenticator; the account becomes
// recovery-restricted (spec doc 1, "Account states"; audit mfa.recovery_code.used).
import { consumeRecoveryCode } from '../../mfa/index.ts';
import { withFactor } from '../transitions.ts';
import { restrictAfterRecoveryCode } from './account-effects.ts';
import { proofFailed } from './proof-failed.ts';
import { type Step, stepActor, stepRecorder } from './step.ts';
import { codeBody } from './totp.ts';

export const recoveryCodeStep: Step<{ code: string }> = {
  path: 'recovery-code',
  spendsBudgets: true,
  action: 'recovery_code',
  decode: codeBody,
  async run(q, t, body, ctx) {
    const userId = t.userId;
    if (!userId || !(await consumeRecoveryCode(q, t.realmId, userId, body.code, ctx.now))) {
      return proofFailed(q, t, ctx, 'recovery');
    }
    await stepRecorder(q, t.realmId, ctx, stepActor(userId)).audit('mfa.recovery_code.used', {
      category: 'security',
      subject: { type: 'user', id: userId },
      data: { transaction_id: t.id },
    });
    await restrictAfterRecoveryCode(q, ctx, userId);
    return { tx: withFactor(t, 'recovery') };
  },
};
