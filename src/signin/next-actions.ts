// Which actions a pending transaction offers next (spec doc 1, "The evaluation order of actions
// inside a pending transaction"). Each stage is a pure function of the transaction and the facts
// loaded for it; the first stage that is not satisfied decides. Stages that need capabilities not
// built yet (email verification, flow rules) join this list as those capabilities arrive.
import { maySignIn } from '../users/account.states.ts';
import type { ActionType, Evaluation, Facts, NextAction } from './next-actions.types.ts';
import {
  enterpriseSsoStage,
  organizationRequiresMfa,
  organizationStage,
  ssoOnlyPrimary,
} from './organization-rules.ts';
import { type Factor, PRIMARY_FACTORS, SECOND_FACTORS, type SigninTx } from './transaction.ts';

type Stage = (t: SigninTx, f: Facts) => Evaluation | 'satisfied';

const action = (type: ActionType, fields: string[], options?: Record<string, unknown>): NextAction => ({
  type,
  required: true,
  fields,
  ...(options ? { options } : {}),
});

export const hasPrimary = (t: SigninTx): boolean =>
  t.completedFactors.some((f) => PRIMARY_FACTORS.includes(f));
export const mfaDone = (t: SigninTx): boolean => t.completedFactors.some((f) => SECOND_FACTORS.includes(f));

export function mfaRequired(t: SigninTx, f: Facts): boolean {
  return (
    f.mfaRequirement === 'required' ||
    t.intent === 'step_up' ||
    f.flow?.outcome === 'require_mfa' ||
    f.hasTotp ||
    f.hasHotp === true ||
    f.privileged ||
    (f.user?.protected ?? false) ||
    f.client.requireMfa ||
    t.acrValues.some((v) => v === 'mfa' || v === 'phishing_resistant') ||
    f.adminAudienceRequested ||
    organizationRequiresMfa(t, f)
  );
}

/** prompt=select_account with a reused SSO session: the user confirms the account first. */
const selectAccount: Stage = (t) =>
  t.sessionId && t.prompt.includes('select_account') && !t.accountConfirmed
    ? { kind: 'actions', actions: [action('select_account', ['continue'])] }
    : 'satisfied';

const primary: Stage = (t, f) => {
  if (hasPrimary(t)) return 'satisfied';
  const ssoOnly = ssoOnlyPrimary(t, f);
  if (ssoOnly !== 'satisfied') return ssoOnly;
  if (t.userId === null && t.identifier === null) {
    return {
      kind: 'actions',
      actions: [action('identify', ['identifier']), action('password', ['password', 'identifier'])],
    };
  }
  return { kind: 'actions', actions: [action('password', ['password'])] };
};

const accountState: Stage = (_t, f) =>
  f.user && maySignIn(f.user.state) ? 'satisfied' : { kind: 'blocked', reason: 'account_unavailable' };

/** acr_values asks for the phishing-resistant profile. */
export const phishingResistantRequired = (t: SigninTx): boolean => t.acrValues.includes('phishing_resistant');

// Only a user-verified passkey or a multi-factor certificate satisfies the phishing-resistant
// profile, and TOTP is never offered for it. Neither factor can be proved yet, so such a
// transaction cannot go on (and must not fall back to TOTP).
const PHISHING_RESISTANT_FACTORS: readonly Factor[] = ['hwk', 'x509'];

const mfa: Stage = (t, f) => {
  if (phishingResistantRequired(t) || f.flow?.outcome === 'require_phishing_resistant') {
    return t.completedFactors.some((x) => PHISHING_RESISTANT_FACTORS.includes(x))
      ? 'satisfied'
      : { kind: 'blocked', reason: 'login_method_not_allowed' };
  }
  if (!mfaRequired(t, f) || mfaDone(t) || !(f.hasTotp || f.hasHotp === true)) return 'satisfied';
  if (f.rememberedDevice === true && !stepUpDemanded(t, f)) return 'satisfied';
  const actions: NextAction[] = [];
  if (f.hasTotp) actions.push(action('totp', ['code']));
  if (f.hasHotp === true) actions.push(action('hotp', ['code']));
  if (f.hasRecoveryCodes) actions.push(action('recovery_code', ['code']));
  return { kind: 'actions', actions };
};

/**
 * MFA asked for by this request or by the account's standing, which a remembered device never
 * skips (docs/security.md, "Remembered devices"): acr_values (also implied by scopes), the admin
 * audience, a privileged role, a protected account, intent step_up.
 */
export const stepUpDemanded = (t: SigninTx, f: Facts): boolean =>
  t.acrValues.some((v) => v === 'mfa' || v === 'phishing_resistant') ||
  t.intent === 'step_up' ||
  f.adminAudienceRequested ||
  f.privileged ||
  (f.user?.protected ?? false);

/** Authentication-flow rules (evaluation order 4): deny stops, a challenge is answered first. */
const flowStage: Stage = (_t, f) => {
  if (f.flow?.outcome === 'deny') return { kind: 'blocked', reason: 'authentication_policy_denied' };
  if (f.flow?.outcome === 'challenge' && !f.flow.challengePassed)
    return { kind: 'actions', actions: [action('challenge', ['provider_response', 'code'])] };
  return 'satisfied';
};

/**
 * After a second factor proved in this sign-in (not carried over from a reused SSO session, and
 * not a recovery code), with login.remember_devices on: remember this device?
 */
const rememberDevice: Stage = (t, f) =>
  f.offerRememberDevice === true &&
  t.completedFactors.some((x) => SECOND_FACTORS.includes(x) && x !== 'recovery') &&
  t.sessionId === null &&
  f.rememberedDevice !== true
    ? { kind: 'actions', actions: [action('remember_device', ['remember'])] }
    : 'satisfied';

const requiredActions: Stage = (t, f) => {
  const enrolled = f.hasTotp || f.hasHotp === true;
  const mustEnroll = (mfaRequired(t, f) && !enrolled) || f.user?.requiredActions.includes('configure_totp');
  if (mustEnroll && !enrolled) return { kind: 'actions', actions: [action('enroll_totp', [])] };
  if (f.user?.requiredActions.includes('update_password')) {
    return { kind: 'actions', actions: [action('update_password', ['new_password'])] };
  }
  return 'satisfied';
};

const consent: Stage = (t, f) => {
  if (t.consentScopes !== null) return 'satisfied';
  const asked = f.client.consentMode === 'required' || t.prompt.includes('consent');
  if (!asked || (f.consentCovers && !t.prompt.includes('consent'))) return 'satisfied';
  return { kind: 'actions', actions: [action('consent', ['approve', 'scopes'], { scopes: t.scopes })] };
};

export const STAGES: readonly Stage[] = [
  selectAccount,
  primary,
  accountState,
  flowStage,
  mfa,
  rememberDevice,
  requiredActions,
  organizationStage,
  enterpriseSsoStage,
  consent,
];

export function evaluate(t: SigninTx, f: Facts): Evaluation {
  for (const stage of STAGES) {
    const r = stage(t, f);
    if (r !== 'satisfied') return r;
  }
  return { kind: 'complete' };
}
