// What the requested scopes of the requested resources ask of the sign-in (spec doc 1, "MFA is
// required when"): a scope's step_up_acr, or sensitivity privileged, implies acr_values mfa (or the
// named profile); its max_auth_age_seconds lowers max_age. The start folds both into the
// transaction, so every later stage (SSO reuse, the MFA stage) sees one rule.
import type { ResourceDefinition } from '../resources/resource.ts';

export interface ScopeDemands {
  /** acr values the scopes imply, to join the request's own. */
  acrValues: string[];
  /** The smallest max_auth_age_seconds among the requested scopes; null when none sets one. */
  maxAgeSeconds: number | null;
}

export function scopeDemands(
  resources: readonly ResourceDefinition[],
  scopes: readonly string[],
): ScopeDemands {
  const acr = new Set<string>();
  let maxAge: number | null = null;
  for (const resource of resources) {
    for (const s of resource.scopes) {
      if (!scopes.includes(s.name)) continue;
      if (s.stepUpAcr) acr.add(s.stepUpAcr);
      if (s.sensitivity === 'privileged') acr.add('mfa');
      if (s.maxAuthAgeSeconds !== undefined)
        maxAge = maxAge === null ? s.maxAuthAgeSeconds : Math.min(maxAge, s.maxAuthAgeSeconds);
    }
  }
  return { acrValues: [...acr], maxAgeSeconds: maxAge };
}

/** The request's acr_values and max_age with the scopes' demands applied. */
export function withScopeDemands(
  request: { acrValues: string[]; maxAge: number | null },
  d: ScopeDemands,
): { acrValues: string[]; maxAge: number | null } {
  const acrValues = [...request.acrValues];
  for (const v of d.acrValues) if (!acrValues.includes(v)) acrValues.push(v);
  const maxAge =
    d.maxAgeSeconds === null
      ? request.maxAge
      : request.maxAge === null
        ? d.maxAgeSeconds
        : Math.min(request.maxAge, d.maxAgeSeconds);
  return { acrValues, maxAge };
}
