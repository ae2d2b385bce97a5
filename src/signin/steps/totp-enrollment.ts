// totp/enroll {} then totp/activate {code} (spec doc 1, endpoint table): a new secret is shown
// once and held sealed in the transaction until a code from it proves the authenticator works.
// Activation stores the authenticator, issues recovery codes (shown once; while the realm allows
// them), clears the
// configure_totp required action and counts as the second factor.
import { encodeBase32 } from '../../mfa/base32.ts';
import { factorAllowed } from '../../mfa/factor-rules.ts';
import { replaceRecoveryCodes, storeTotp } from '../../mfa/index.ts';
import { verifyTotp } from '../../mfa/otp.ts';
import { newTotpSecret, totpUri } from '../../mfa/otpauth-uri.ts';
import { generateRecoveryCodes } from '../../mfa/recovery-codes.ts';
import { object } from '../../platform/http/decode.ts';
import { Problem } from '../../platform/http/problem.ts';
import { brandNameOf } from '../../realms/index.ts';
import { removeRequiredAction } from '../../users/index.ts';
import { withFactor } from '../transitions.ts';
import { mailFactorAdded, restoreAfterStrongFactor } from './account-effects.ts';
import { proofFailed } from './proof-failed.ts';
import { type Step, type StepContext, stepActor, stepRecorder } from './step.ts';
import { codeBody } from './totp.ts';

const enrollmentContext = (realmId: string, txId: string) => `totp-enrollment/${realmId}/${txId}`;

function keyringOf(ctx: StepContext) {
  if (!ctx.app.keyring) throw new Problem(503, 'temporarily_unavailable', 'no root key is configured');
  return ctx.app.keyring;
}

export const totpEnrollStep: Step<Record<string, never>> = {
  path: 'totp/enroll',
  spendsBudgets: false,
  action: 'enroll_totp',
  decode: object({}),
  async run(_q, t, _body, ctx) {
    const secret = newTotpSecret();
    const base32 = encodeBase32(secret);
    const account = ctx.facts.user?.email ?? t.identifier ?? t.userId ?? 'account';
    return {
      tx: {
        ...t,
        pendingTotpSealed: keyringOf(ctx).encrypt('totp-seed', secret, enrollmentContext(t.realmId, t.id)),
      },
      oneTime: {
        totp: {
          secret: base32,
          otpauth_uri: totpUri({ issuer: brandNameOf(ctx.realm, ctx.policy), account, secret: base32 }),
        },
      },
    };
  },
};

export const totpActivateStep: Step<{ code: string }> = {
  path: 'totp/activate',
  spendsBudgets: false,
  action: 'enroll_totp',
  decode: codeBody,
  async run(q, t, body, ctx) {
    const userId = t.userId;
    if (!t.pendingTotpSealed || !userId) {
      throw new Problem(409, 'conflict', 'start the enrollment with totp/enroll first');
    }
    const keyring = keyringOf(ctx);
    const secret = keyring.decrypt('totp-seed', t.pendingTotpSealed, enrollmentContext(t.realmId, t.id));
    const r = verifyTotp(secret, body.code.trim(), ctx.now.getTime());
    if (!r.ok) return proofFailed(q, t, ctx, 'totp');
    await storeTotp(q, keyring, t.realmId, userId, secret, r.step, ctx.now);
    // Recovery codes come with the authenticator while mfa.allowed_factors lists them.
    const codes = factorAllowed(ctx.policy, 'recovery_code') ? generateRecoveryCodes() : null;
    if (codes) await replaceRecoveryCodes(q, t.realmId, userId, codes, ctx.now);
    await removeRequiredAction(q, t.realmId, userId, 'configure_totp', ctx.now);
    await stepRecorder(q, t.realmId, ctx, stepActor(userId)).audit('mfa.totp.enrolled', {
      category: 'security',
      subject: { type: 'user', id: userId },
      data: { transaction_id: t.id, recovery_codes: codes?.length ?? 0 },
    });
    await restoreAfterStrongFactor(q, ctx, userId);
    await mailFactorAdded(q, t, ctx, 'totp');
    return {
      tx: withFactor({ ...t, pendingTotpSealed: null }, 'totp'),
      ...(codes ? { oneTime: { recovery_codes: codes } } : {}),
    };
  },
};
