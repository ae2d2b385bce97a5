// Who may change which factor (spec doc 1, Authentication 6 and the self-service factor table):
// the credential-change rule (adding or removing a factor, changing the password), the MFA a
// factor operation needs, and the realm's HOTP settings.
import { Problem } from '../platform/http/problem.ts';
import type { RealmPolicy } from '../realms/index.ts';
import { policyValue } from '../realms/index.ts';
import type { EnrolledFactors } from './factors.repo.ts';

const MFA_OBLIGATION = { type: 'reauthenticate', required_profile: 'mfa' } as const;

const mfaRequired = (detail: string) =>
  new Problem(403, 'mfa_required', detail, { obligation: MFA_OBLIGATION });

/** A second factor: an active TOTP, HOTP or passkey (recovery codes only come with one). */
export const hasSecondFactor = (enrolled: EnrolledFactors): boolean =>
  enrolled.totp || enrolled.hotp || enrolled.webauthn;

/** A self-service change to what proves the account. */
export type CredentialChange = 'add_factor' | 'remove_factor' | 'password';

/**
 * The credential-change rule: while an account has a second factor, adding one (Authentication
 * 6), removing one, or changing the password (the self-service table's password row; passkeys
 * count too) needs a session that completed MFA, so a password alone, or a password and a
 * remembered device, never changes what protects the account. Factor changes answer
 * step_up_required as Authentication 6 names it; a password change mfa_required
 * (docs/decisions.md).
 */
export function requireMfaForCredentialChange(
  enrolled: EnrolledFactors,
  sessionMfa: boolean,
  change: CredentialChange,
): void {
  if (sessionMfa || !hasSecondFactor(enrolled)) return;
  if (change === 'password')
    throw mfaRequired('changing the password of an account with a second factor needs MFA');
  const what = change === 'add_factor' ? 'adding' : 'removing';
  throw new Problem(403, 'step_up_required', `${what} a factor needs a session that completed MFA`, {
    obligation: MFA_OBLIGATION,
  });
}

export function requireMfaSession(sessionMfa: boolean, detail: string): void {
  if (!sessionMfa) throw mfaRequired(detail);
}

export type MfaFactor = 'totp' | 'hotp' | 'webauthn' | 'recovery_code';

/** mfa.allowed_factors of a new realm (HOTP is opt-in). */
const DEFAULT_FACTORS: readonly string[] = ['totp', 'webauthn', 'recovery_code'];

/**
 * Whether mfa.allowed_factors lists the factor. One that is not listed cannot be enrolled and, when
 * an account holds it already, is neither offered nor accepted at sign-in until the realm lists it
 * again; the stored credential stays (docs/decisions.md).
 */
export function factorAllowed(policy: RealmPolicy, factor: MfaFactor): boolean {
  const allowed = policyValue(policy, 'mfa', 'allowed_factors');
  return (Array.isArray(allowed) ? allowed : DEFAULT_FACTORS).includes(factor);
}

export const hotpAllowed = (policy: RealmPolicy): boolean => factorAllowed(policy, 'hotp');

/** The 409 of a self-service enrollment the realm does not allow. */
export function requireFactorAllowed(policy: RealmPolicy, factor: MfaFactor): void {
  if (!factorAllowed(policy, factor))
    throw new Problem(409, 'conflict', `the realm does not allow ${factor} (mfa.allowed_factors)`);
}

/** The enrolled factors that count under the realm's mfa.allowed_factors. */
export const allowedEnrolled = (enrolled: EnrolledFactors, policy: RealmPolicy): EnrolledFactors => ({
  totp: enrolled.totp && factorAllowed(policy, 'totp'),
  hotp: enrolled.hotp && factorAllowed(policy, 'hotp'),
  webauthn: enrolled.webauthn && factorAllowed(policy, 'webauthn'),
  recoveryCodes: enrolled.recoveryCodes && factorAllowed(policy, 'recovery_code'),
});

export interface HotpSettings {
  lookAhead: number;
  resyncWindow: number;
}

/** mfa.hotp with its zero-means-default rules (spec doc 1, policy table and Limits: HOTP). */
export function hotpSettings(policy: RealmPolicy): HotpSettings {
  const h = policyValue(policy, 'mfa', 'hotp');
  const o = h && typeof h === 'object' ? (h as Record<string, unknown>) : {};
  const num = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : 0);
  const lookAhead = Math.min(num(o.look_ahead), 50) || 10;
  const resyncWindow = Math.min(Math.max(num(o.resync_window), lookAhead), 1000) || 100;
  return { lookAhead, resyncWindow: num(o.resync_window) === 0 ? 100 : resyncWindow };
}

export const ENROLLMENT_TTL_MS = 15 * 60_000;
export const RESYNC_WINDOW_MS = 15 * 60_000;
export const RESYNC_ATTEMPTS = 5;
