// Whether the subject token's authentication is strong and fresh enough for an action
// (docs/authorization.md, evaluation steps 4 and 5): conditional role assignments, the token
// resource's scope rules (step_up_acr, max_auth_age_seconds, sensitivity) and the sensitivity of
// a registered application permission. Pure; every answer that falls short is an obligation.

import type { ResourceScope } from '../resources/resource.ts';
import {
  type AssignmentConditions,
  conditionsMet,
  permissionsOfRole,
  type RoleHolding,
  type SessionAssurance,
} from '../roles/effective-roles.ts';
import type { Obligation } from './decision.ts';

/**
 * The service's acr values from weakest to strongest (src/signin: basic, mfa, and the
 * phishing-resistant profile). A known value satisfies itself and every weaker one; a value the
 * service does not issue is satisfied only by itself.
 */
const ACR_RANK: Readonly<Record<string, number>> = { basic: 1, mfa: 2, phishing_resistant: 3 };

export function acrSatisfies(tokenAcr: string | null, required: string): boolean {
  if (required === '') return true;
  const need = ACR_RANK[required];
  if (need === undefined) return tokenAcr === required;
  return tokenAcr !== null && (ACR_RANK[tokenAcr] ?? 0) >= need;
}

export interface SubjectAssurance extends SessionAssurance {
  /** Service principals authenticate without a person: acr and MFA rules do not apply. */
  interactive: boolean;
  acr: string | null;
}

const reauth = (profile: string, maxAge?: number): Obligation =>
  maxAge === undefined
    ? { type: 'reauthenticate', required_profile: profile }
    : { type: 'reauthenticate', required_profile: profile, max_age_seconds: maxAge };

const tooOld = (a: SubjectAssurance, maxAge: number): boolean =>
  a.authAgeSeconds === null || a.authAgeSeconds > maxAge;

export type RbacAnswer = { held: true } | { held: false; obligation: Obligation | null };

/**
 * Whether the roles give the permission. When only assignments whose conditions the session does
 * not meet give it, the obligation says what would meet one: `recent` when freshness alone is
 * missing somewhere, else `mfa`.
 */
export function rbacAnswer(roles: readonly RoleHolding[], action: string, a: SubjectAssurance): RbacAnswer {
  const unmet: AssignmentConditions[] = [];
  for (const role of roles) {
    if (!permissionsOfRole(role).includes(action)) continue;
    if (conditionsMet(role.conditions, a)) return { held: true };
    if (role.conditions) unmet.push(role.conditions);
  }
  if (unmet.length === 0) return { held: false, obligation: null };
  const freshnessOnly = unmet.find((c) => c.require_mfa !== true || a.mfa);
  const c = freshnessOnly ?? (unmet[0] as AssignmentConditions);
  const profile = freshnessOnly ? 'recent' : 'mfa';
  return { held: false, obligation: reauth(profile, c.max_auth_age_seconds) };
}

/** A scope rule of the token's resource the token falls short of, for this action. */
export function scopeStepUp(
  scopes: readonly ResourceScope[],
  carried: ReadonlySet<string>,
  action: string,
  a: SubjectAssurance,
  recentWindowSeconds: number,
): Obligation | null {
  if (!a.interactive) return null;
  for (const s of scopes) {
    if (!carried.has(s.name) || !(s.requiredPermissions ?? []).includes(action)) continue;
    const acrShort = s.stepUpAcr !== undefined && !acrSatisfies(a.acr, s.stepUpAcr);
    const ageShort = s.maxAuthAgeSeconds !== undefined && tooOld(a, s.maxAuthAgeSeconds);
    if (acrShort || ageShort) {
      return reauth(acrShort ? (s.stepUpAcr as string) : 'recent', s.maxAuthAgeSeconds);
    }
    const bySensitivity = sensitivityStepUp(s.sensitivity, a, recentWindowSeconds);
    if (bySensitivity) return bySensitivity;
  }
  return null;
}

/** high: an MFA session; privileged: MFA and authentication within security.recent_auth_window. */
export function sensitivityStepUp(
  sensitivity: string | undefined,
  a: SubjectAssurance,
  recentWindowSeconds: number,
): Obligation | null {
  if (!a.interactive || (sensitivity !== 'high' && sensitivity !== 'privileged')) return null;
  if (sensitivity === 'high') return a.mfa ? null : reauth('mfa');
  if (!a.mfa) return reauth('mfa', recentWindowSeconds);
  return tooOld(a, recentWindowSeconds) ? reauth('recent', recentWindowSeconds) : null;
}

/** Scopes as the resources table stores them (ResourceScope objects); anything else is ignored. */
export function storedScopes(value: unknown): ResourceScope[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (s): s is ResourceScope =>
      typeof s === 'object' && s !== null && typeof (s as { name?: unknown }).name === 'string',
  );
}
