// totp {code}: the enrolled authenticator's current code (RFC 6238, 30 s, one step of drift);
// a step once accepted is never accepted again.
import { lockTotp, recordTotpStep, totpSeedContext } from '../../mfa/index.ts';
import { verifyTotp } from '../../mfa/otp.ts';
import { object, string } from '../../platform/http/decode.ts';
import { withFactor } from '../transitions.ts';
import { restoreAfterStrongFactor } from './account-effects.ts';
import { proofFailed } from './proof-failed.ts';
import type { Step } from './step.ts';

export const codeBody = object({ code: string({ minLength: 1, maxLength: 64 }) });

export const totpStep: Step<{ code: string }> = {
  path: 'totp',
  spendsBudgets: true,
  action: 'totp',
  decode: codeBody,
  async run(q, t, body, ctx) {
    const userId = t.userId;
    const stored = userId ? await lockTotp(q, t.realmId, userId) : null;
    if (!userId || !stored || !ctx.app.keyring) return proofFailed(q, t, ctx, 'totp');
    const key = ctx.app.keyring.decrypt(
      'totp-seed',
      stored.secret_sealed,
      totpSeedContext(t.realmId, userId),
    );
    const lastUsedStep = stored.last_used_step === null ? null : Number(stored.last_used_step);
    const r = verifyTotp(key, body.code.trim(), ctx.now.getTime(), { lastUsedStep });
    if (!r.ok) return proofFailed(q, t, ctx, 'totp');
    await recordTotpStep(q, t.realmId, userId, r.step);
    await restoreAfterStrongFactor(q, ctx, userId);
    return { tx: withFactor(t, 'totp') };
  },
};
