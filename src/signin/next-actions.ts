// Which actions a pending transaction offers next (spec doc 1, "The evaluation order of actions
// inside a pending transaction"). Each stage is a pure function of the transaction and the facts
// loaded for it; the first stage that is not satisfied decides. Stages that need capabilities not
// built yet (email verification, flow rules) join this list as those capabilities arrive.

import { maySignIn } from '../users/account.states.ts';
import { identifierTypeOf } from '../users/index.ts';
import type { ChallengePurpose } from './challenges.repo.ts';
import {
  externalRedirect,
  linkAccount,
  offeredProviders,
  pendingLink,
  ssoOnlyPrimary,
} from './federation-rules.ts';
import type { ActionType, Evaluation, Facts, NextAction } from './next-actions.types.ts';
import { enterpriseSsoStage, organizationRequiresMfa, organizationStage } from './organization-rules.ts';
import { isSecondFactor, PRIMARY_FACTORS, phishingResistantProved, type SigninTx } from './transaction.ts';

const phishingResistantCertificate = (t: SigninTx): boolean =>
  t.completedFactors.includes('x509') && t.certificateMultiFactor === true;

type Stage = (t: SigninTx, f: Facts) => Evaluation | 'satisfied';

const action = (type: ActionType, fields: string[], options?: Record<string, unknown>): NextAction => ({
  type,
  required: true,
  fields,
  ...(options ? { options } : {}),
});

/**
 * The groups of alternatives: actions any one of which answers their stage (docs/signin.md,
 * "Alternatives"). A group is named in each member's options.group, and each member is
 * `required: false`, since none of them is needed once another is done.
 */
export const ALTERNATIVE_GROUPS = ['primary', 'mfa', 'mfa_enrollment'] as const;
type AlternativeGroup = (typeof ALTERNATIVE_GROUPS)[number];

/** Marks a stage's actions as alternatives of one group; a lone action stays required. */
function oneOf(group: AlternativeGroup, actions: NextAction[]): NextAction[] {
  if (actions.length < 2) return actions;
  return actions.map((a) => ({ ...a, required: false, options: { group, ...a.options } }));
}

export const hasPrimary = (t: SigninTx): boolean =>
  t.completedFactors.some((f) => PRIMARY_FACTORS.includes(f));
/**
 * A second factor, or a passkey used without user verification (swk) next to another primary
 * factor: possession on top of knowledge. A user-verified passkey (hwk) is both on its own, and
 * so is a certificate from a multi-factor trust anchor.
 */
export const mfaDone = (t: SigninTx): boolean =>
  t.completedFactors.some((f) => isSecondFactor(t, f)) ||
  (t.completedFactors.includes('swk') &&
    t.completedFactors.some((f) => f !== 'swk' && PRIMARY_FACTORS.includes(f)));

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

/** An action answered with a code sent by otp/send {purpose}; options say whether one is out. */
const codeAction = (type: ActionType, purpose: ChallengePurpose, f: Facts): NextAction =>
  action(type, ['code'], { purpose, code_sent: f.sent.includes(purpose) });

/**
 * The local methods of step 2. While an upstream identity waits to be linked (`linking`), they
 * are the ways the existing account may prove itself: never an SMS code (spec doc 1, link_account).
 */
function localPrimary(t: SigninTx, f: Facts, linking: boolean): NextAction[] {
  const m = f.methods;
  if (t.userId === null && t.identifier === null) {
    // What the realm offers after identify (never anything about an account): lets a login page
    // show "sign in with a code" and "forgot your password" before anyone is identified.
    const hints = {
      ...(m.emailOtp || m.magicLink || (m.smsOtp && !linking) ? { other_methods: true } : {}),
      ...(m.password && m.mail ? { password_reset: true } : {}),
    };
    const actions = [action('identify', ['identifier'], Object.keys(hints).length > 0 ? hints : undefined)];
    if (m.password) actions.push(action('password', ['password', 'identifier']));
    // A discoverable passkey names its account itself (conditional UI offers it while typing).
    if (m.passkeys) actions.push(action('webauthn', ['credential']));
    // The presented certificate names its account itself, as a discoverable passkey does.
    if (m.certificates && !linking) actions.push(action('certificate', []));
    return actions;
  }
  // Methods follow the identifier's type, never whether an account exists behind it.
  const type = t.identifier ? identifierTypeOf(t.identifier) : f.user?.email ? 'email' : null;
  const actions: NextAction[] = [];
  // A forgotten password: password/reset mails a code to an email identifier (docs/registration.md).
  if (m.password)
    actions.push(
      m.mail && type === 'email'
        ? action('password', ['password'], {
            reset: true,
            reset_code_sent: f.sent.includes('password_reset'),
          })
        : action('password', ['password']),
    );
  if (m.emailOtp && type === 'email') actions.push(codeAction('email_otp', 'login', f));
  if (m.magicLink && type === 'email')
    actions.push(
      action('magic_link', ['token'], { purpose: 'magic_link', link_sent: f.sent.includes('magic_link') }),
    );
  if (m.smsOtp && type === 'phone' && !linking) actions.push(codeAction('sms_otp', 'login', f));
  if (m.passkeys) actions.push(action('webauthn', ['credential']));
  if (m.certificates && !linking) actions.push(action('certificate', []));
  return actions;
}

const primary: Stage = (t, f) => {
  if (hasPrimary(t)) return 'satisfied';
  const ssoOnly = ssoOnlyPrimary(t, f);
  if (ssoOnly !== 'satisfied') return ssoOnly;
  if (pendingLink(f)) {
    const proofs = localPrimary(t, f, true);
    // link_account says what happens; the proofs are the alternatives that answer it.
    return proofs.length > 0
      ? { kind: 'actions', actions: [linkAccount(f, proofs), ...oneOf('primary', proofs)] }
      : { kind: 'blocked', reason: 'login_method_not_allowed' };
  }
  const providers = offeredProviders(f);
  const actions = oneOf('primary', [
    ...localPrimary(t, f, false),
    ...(providers.length > 0 ? [externalRedirect(providers)] : []),
  ]);
  return actions.length > 0
    ? { kind: 'actions', actions }
    : { kind: 'blocked', reason: 'login_method_not_allowed' };
};

/**
 * A registration for an address that has an account stands where the new account would: at
 * email verification (whose code never works: nothing is sent), else held for approval. Nothing
 * after it can be reached, so nothing tells the two apart (docs/registration.md).
 */
const registrationDecoy: Stage = (t, f) => {
  if (!t.registrationDecoy || !hasPrimary(t)) return 'satisfied';
  return t.registrationDecoy.verifyEmail && f.methods.mail
    ? { kind: 'actions', actions: [codeAction('verify_email', 'verify_email', f)] }
    : { kind: 'blocked', reason: 'registration_pending_approval' };
};

/** Step 3: an account waiting for verification confirms its email address with a code. */
const emailVerification: Stage = (_t, f) =>
  f.user?.state === 'pending_verification' && f.user.email && f.methods.mail
    ? { kind: 'actions', actions: [codeAction('verify_email', 'verify_email', f)] }
    : 'satisfied';

/** The register action's fields: a username only where login.identifiers lists it. */
const registerFields = (f: Facts): string[] =>
  f.signup.usernames === false
    ? ['email', 'password', 'display_name', 'attributes']
    : ['email', 'password', 'display_name', 'username', 'attributes'];

/** intent register: the new account's details come first (the register action). */
const registration: Stage = (t, f) => {
  if (t.intent !== 'register' || t.userId !== null || hasPrimary(t) || f.signup.mode === 'closed')
    return 'satisfied';
  if (t.registrationDecoy) return 'satisfied';
  return {
    kind: 'actions',
    actions: [
      action('register', registerFields(f), {
        mode: f.signup.mode,
        ...(f.signup.requireApproval ? { requires_approval: true } : {}),
        ...(f.profile.required.length > 0 ? { required_attributes: f.profile.required } : {}),
      }),
    ],
  };
};

/** A registration held for an administrator stops here until it is approved. */
const registrationApproval: Stage = (_t, f) => {
  if (f.signup.approvalPending) return { kind: 'blocked', reason: 'registration_pending_approval' };
  // A guest account signs in again only while the realm still allows guests.
  if (f.user?.isGuest && !f.signup.allowGuests) return { kind: 'blocked', reason: 'guest_not_permitted' };
  return 'satisfied';
};

// A pending_deletion account goes on to MFA and then stops at cancel_deletion (spec doc 1,
// evaluation order 5); every other state that may not sign in stops here.
const accountState: Stage = (_t, f) =>
  f.user && (maySignIn(f.user.state) || f.user.state === 'pending_deletion')
    ? 'satisfied'
    : { kind: 'blocked', reason: 'account_unavailable' };

const pendingDeletion: Stage = (_t, f) =>
  f.user?.state === 'pending_deletion'
    ? { kind: 'actions', actions: [action('cancel_deletion', [])] }
    : 'satisfied';

/** acr_values asks for the phishing-resistant profile. */
export const phishingResistantRequired = (t: SigninTx): boolean => t.acrValues.includes('phishing_resistant');

/**
 * The phishing-resistant profile applies: acr_values or a flow rule ask for it, or the realm sets
 * mfa.admin_phishing_resistant and the account is privileged.
 */
export const phishingResistantDemanded = (t: SigninTx, f: Facts): boolean =>
  phishingResistantRequired(t) ||
  f.flow?.outcome === 'require_phishing_resistant' ||
  (f.adminPhishingResistant === true && f.privileged);

// Only a user-verified passkey (hwk) or a multi-factor certificate satisfies the profile, and
// TOTP and HOTP are never offered for it. An account with no second factor yet may enroll a
// passkey here; one with TOTP or HOTP only must first add a passkey from an MFA session (the
// factor-adding rule), so its sign-in stops.
const UV_REQUIRED = { user_verification: 'required' };

/**
 * A certificate the request presents, not yet proved in this sign-in, may prove the second factor
 * after another primary method (it counts only from a multi-factor trust anchor).
 */
const certificateSecondFactor = (t: SigninTx, f: Facts): NextAction[] =>
  f.methods.certificates === true && !t.completedFactors.includes('x509') ? [action('certificate', [])] : [];

const phishingResistantMfa = (t: SigninTx, f: Facts): Evaluation | 'satisfied' => {
  if (phishingResistantProved(t)) return 'satisfied';
  const certificate = certificateSecondFactor(t, f);
  if (f.hasWebauthn === true)
    return {
      kind: 'actions',
      actions: oneOf('mfa', [action('webauthn', ['credential'], UV_REQUIRED), ...certificate]),
    };
  if (f.webauthnAllowed !== false && !f.hasTotp && f.hasHotp !== true)
    return {
      kind: 'actions',
      actions: oneOf('mfa', [action('enroll_webauthn', ['credential', 'name'], UV_REQUIRED), ...certificate]),
    };
  if (certificate.length > 0) return { kind: 'actions', actions: certificate };
  return { kind: 'blocked', reason: 'login_method_not_allowed' };
};

const mfa: Stage = (t, f) => {
  if (phishingResistantDemanded(t, f)) return phishingResistantMfa(t, f);
  const enrolled = f.hasTotp || f.hasHotp === true || f.hasWebauthn === true;
  if (!mfaRequired(t, f) || mfaDone(t) || !enrolled) return 'satisfied';
  if (f.rememberedDevice === true && !stepUpDemanded(t, f)) return 'satisfied';
  const actions: NextAction[] = [];
  if (f.hasWebauthn === true) actions.push(action('webauthn', ['credential']));
  if (f.hasTotp) actions.push(action('totp', ['code']));
  if (f.hasHotp === true) actions.push(action('hotp', ['code']));
  if (f.hasRecoveryCodes) actions.push(action('recovery_code', ['code']));
  actions.push(...certificateSecondFactor(t, f));
  return { kind: 'actions', actions: oneOf('mfa', actions) };
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
  if (f.flow?.outcome === 'challenge' && !f.flow.challengePassed) {
    // The emailed-code alternative is offered only where mail can be sent.
    const options = f.flow.emailCode && f.methods.mail ? { email_code: true } : undefined;
    return { kind: 'actions', actions: [action('challenge', ['provider_response', 'code'], options)] };
  }
  return 'satisfied';
};

/**
 * After a second factor proved in this sign-in (not carried over from a reused SSO session, and
 * not a recovery code), with login.remember_devices on: remember this device?
 */
const rememberDevice: Stage = (t, f) =>
  f.offerRememberDevice === true &&
  t.completedFactors.some((x) => isSecondFactor(t, x) && x !== 'recovery') &&
  t.sessionId === null &&
  f.rememberedDevice !== true
    ? { kind: 'actions', actions: [action('remember_device', ['remember'])] }
    : 'satisfied';

const requiredActions: Stage = (t, f) => {
  const otp = f.hasTotp || f.hasHotp === true;
  const totpAllowed = f.totpAllowed !== false;
  // An administrator's configure_totp asks for an authenticator app in particular (while the
  // realm allows one; otherwise MFA enrollment below offers what it allows).
  if (f.user?.requiredActions.includes('configure_totp') && !otp && totpAllowed)
    return { kind: 'actions', actions: [action('enroll_totp', [])] };
  // Multi-factor authentication the connection trusts the upstream with needs no local factor, and
  // neither does a certificate from a multi-factor trust anchor (a smart card with its PIN).
  const provedElsewhere = t.completedFactors.includes('fed_mfa') || phishingResistantCertificate(t);
  if (mfaRequired(t, f) && !otp && f.hasWebauthn !== true && !provedElsewhere) {
    const actions: NextAction[] = [];
    if (totpAllowed) actions.push(action('enroll_totp', []));
    if (f.webauthnAllowed !== false) actions.push(action('enroll_webauthn', ['credential', 'name']));
    // Instead of enrolling: a smart card the request presents (multi-factor anchors only count).
    actions.push(...certificateSecondFactor(t, f));
    // Only HOTP allowed: it is enrolled from the account API, never during a sign-in.
    if (actions.length === 0) return { kind: 'blocked', reason: 'login_method_not_allowed' };
    return { kind: 'actions', actions: oneOf('mfa_enrollment', actions) };
  }
  const required = f.user?.requiredActions ?? [];
  if (required.includes('update_password') || f.resetProved) {
    // options.reset: the person asked for this through a forgotten-password code, no administrator.
    const why = f.resetProved ? { reset: true } : undefined;
    return { kind: 'actions', actions: [action('update_password', ['new_password'], why)] };
  }
  if (required.includes('verify_email') && f.user?.email && f.methods.mail)
    return { kind: 'actions', actions: [codeAction('verify_email', 'verify_email', f)] };
  if (required.includes('verify_contact') && f.user?.phone && f.methods.sms)
    return { kind: 'actions', actions: [codeAction('verify_contact', 'verify_contact', f)] };
  if (f.terms.version && !f.terms.accepted)
    return { kind: 'actions', actions: [action('accept_terms', ['version'], { version: f.terms.version })] };
  if (f.profile.missing.length > 0)
    return {
      kind: 'actions',
      actions: [action('complete_profile', ['fields'], { fields: f.profile.missing })],
    };
  return 'satisfied';
};

const consent: Stage = (t, f) => {
  if (t.consentScopes !== null) return 'satisfied';
  const asked = f.client.consentMode === 'required' || t.prompt.includes('consent');
  if (!asked || (f.consentCovers && !t.prompt.includes('consent'))) return 'satisfied';
  return {
    kind: 'actions',
    actions: [
      action('consent', ['approve', 'scopes'], {
        scopes: t.scopes,
        third_party: f.client.thirdParty === true,
      }),
    ],
  };
};

export const STAGES: readonly Stage[] = [
  selectAccount,
  registration,
  primary,
  registrationDecoy,
  emailVerification,
  registrationApproval,
  accountState,
  flowStage,
  mfa,
  pendingDeletion,
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
