// The decision answer (spec doc 1, Authorization decision; Errors: reason codes) and the rules
// that depend only on the answer: how long a caller may cache it, and its wire form.
import { newId } from '../platform/ids.ts';

export type ReasonCode =
  | 'ALLOWED'
  | 'NOT_PERMITTED'
  | 'STEP_UP_REQUIRED'
  | 'ORGANIZATION_MISMATCH'
  | 'UNKNOWN_PROJECT'
  | 'PROJECT_ORGANIZATION_MISMATCH'
  | 'SUBJECT_TOKEN_INACTIVE'
  | 'INVALID_REQUEST'
  | 'EVALUATION_ERROR'
  // Support tokens only (src/decisions/support-access.ts).
  | 'SUPPORT_ACCESS_FORBIDDEN_ACTION'
  | 'SUPPORT_ACCESS_READ_ONLY'
  | 'SUPPORT_ACCESS_WRITE_NOT_ALLOWLISTED'
  | 'EXTERNAL_POLICY_DENIED'
  | 'EXTERNAL_POLICY_UNAVAILABLE';

export interface Obligation {
  type: 'reauthenticate';
  /** 'mfa', 'recent', or the acr a resource scope asks for. */
  required_profile: string;
  max_age_seconds?: number;
}

export interface Outcome {
  code: ReasonCode;
  obligations: Obligation[];
}

export const outcome = (code: ReasonCode, obligation?: Obligation | null): Outcome => ({
  code,
  obligations: obligation ? [obligation] : [],
});

export interface DecisionResponse {
  decision_id: string;
  allowed: boolean;
  reason_code: ReasonCode;
  policy_version: string;
  obligations: Obligation[];
  cache_ttl_seconds: number;
}

/** Answers a caller must not reuse: they change with the next sign-in, the next attempt, or were never real. */
const UNCACHEABLE = new Set<ReasonCode>([
  'STEP_UP_REQUIRED',
  'EVALUATION_ERROR',
  'EXTERNAL_POLICY_UNAVAILABLE',
  'INVALID_REQUEST',
]);
export const MAX_CACHE_TTL_SECONDS = 30;

/** Seconds a caller may reuse the answer: never past the subject token's expiry, at most 30. */
export function cacheTtlSeconds(code: ReasonCode, tokenExpiresAt: number | null, now: Date): number {
  if (UNCACHEABLE.has(code) || tokenExpiresAt === null) return 0;
  const left = tokenExpiresAt - Math.floor(now.getTime() / 1000);
  return Math.max(0, Math.min(MAX_CACHE_TTL_SECONDS, left));
}

/** policy_version: the realm policy revision and the realm's authorization revision. */
export const policyVersion = (policyRevision: number, authzRevision: number): string =>
  `${policyRevision}.${authzRevision}`;

export function present(
  o: Outcome,
  version: string,
  tokenExpiresAt: number | null,
  now: Date,
): DecisionResponse {
  return {
    decision_id: newId('dec', now.getTime()),
    allowed: o.code === 'ALLOWED',
    reason_code: o.code,
    policy_version: version,
    obligations: o.obligations,
    cache_ttl_seconds: cacheTtlSeconds(o.code, tokenExpiresAt, now),
  };
}
