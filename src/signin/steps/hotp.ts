// hotp {code}: the account's HOTP token (RFC 4226), accepted within mfa.hotp.look_ahead counters
// of the stored one; the counter only moves forward, so a code is never accepted twice. Offered
// only while mfa.allowed_factors lists hotp (spec doc 1, evaluation order 5).

import { hotpAllowed, hotpSettings } from '../../mfa/factor-rules.ts';
import { advanceHotp, hotpSeedContext, lockHotp } from '../../mfa/index.ts';
import { verifyHotp } from '../../mfa/otp.ts';
import { withFactor } from '../transitions.ts';
import { restoreAfterStrongFactor } from './account-effects.ts';
import { proofFailed } from './proof-failed.ts';
import type { Step } from './step.ts';
import { codeBody } from './totp.ts';

export const hotpStep: Step<{ code: string }> = {
  path: 'hotp',
  spendsBudgets: true,
  action: 'hotp',
  decode: codeBody,
  async run(q, t, body, ctx) {
    const userId = t.userId;
    const stored = userId && hotpAllowed(ctx.policy) ? await lockHotp(q, t.realmId, userId) : null;
    if (!userId || !stored || !ctx.app.keyring) return proofFailed(q, t, ctx, 'hotp');
    const key = ctx.app.keyring.decrypt(
      'totp-seed',
      stored.secret_sealed,
      hotpSeedContext(t.realmId, userId),
    );
    const r = verifyHotp(key, body.code.trim(), Number(stored.counter), hotpSettings(ctx.policy).lookAhead);
    if (!r.ok) return proofFailed(q, t, ctx, 'hotp');
    await advanceHotp(q, t.realmId, userId, r.nextCounter);
    await restoreAfterStrongFactor(q, ctx, userId);
    return { tx: withFactor(t, 'hotp') };
  },
};
