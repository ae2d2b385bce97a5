// A workload federation rule (docs/workload-federation.md): which outside issuer's JWTs a service
// client accepts in place of a secret, and what a workload's token must show. The sizes are those
// of document 2, Limits, "Workload federation"; the rest is ours (docs/decisions.md). Pure: the
// request is decoded here and its values judged, so one answer lists everything wrong.
import {
  array,
  type Decoded,
  object,
  optional,
  record,
  refine,
  string,
  unknownJson,
} from '../platform/http/decode.ts';
import type { FieldError } from '../platform/http/problem.ts';
import { checkPublicKeys, type JwkSet, pushReceiverUriProblem } from './client-rules.ts';
import type { Environment } from './redirect-uri.ts';

export const WORKLOAD_LIMITS = {
  /** An assertion's size at the token endpoint. */
  assertionBytes: 16 * 1024,
  /** Keys of an inline key set. */
  minInlineKeys: 1,
  maxInlineKeys: 20,
  /** Claims a rule may constrain, and the values each may allow. */
  maxClaims: 20,
  minClaimValues: 1,
  maxClaimValues: 50,
  /** How long a fetched key set is used before it is fetched again. */
  keySetCacheMs: 5 * 60_000,
  /** Rules per client (ours: a client is one workload, seldom run from more than a few places). */
  maxRulesPerClient: 20,
} as const;

const withoutControls = (v: string) => (/[\p{Cc}\p{Cf}]/u.test(v) ? 'no control characters' : null);

export const decodeWorkloadFederation = object({
  name: refine(string({ minLength: 1, maxLength: 200 }), withoutControls, 'control_character'),
  issuer: string({ minLength: 1, maxLength: 2048 }),
  audience: optional(refine(string({ minLength: 1, maxLength: 512 }), withoutControls, 'control_character')),
  jwks_uri: optional(string({ minLength: 1, maxLength: 2048 })),
  jwks: optional(object({ keys: array(record(unknownJson(), { maxEntries: 32, maxBytes: 16 * 1024 })) })),
  claims: record(array(string({ minLength: 1, maxLength: 512 })), { maxEntries: 64 }),
});
export type WorkloadFederationInput = Decoded<typeof decodeWorkloadFederation>;

/** A rule as stored and used. */
export interface WorkloadRule {
  id: string;
  name: string;
  issuer: string;
  audience: string;
  jwksUri: string | null;
  jwks: JwkSet | null;
  claims: Record<string, string[]>;
}

/**
 * Value errors of a decoded rule (422), each naming its member. Claim names are checked against
 * the shape decoder's pattern; an issuer is an https URL (http outside production), as the OpenID
 * Connect issuers of CI systems and clusters are.
 */
export function workloadRuleProblems(input: WorkloadFederationInput, env: Environment): FieldError[] {
  const errors: FieldError[] = [];
  const issuerWhy = pushReceiverUriProblem(input.issuer, env);
  if (issuerWhy) errors.push({ field: 'issuer', code: 'invalid_uri', detail: issuerWhy });
  const hasUri = input.jwksUri !== undefined;
  const hasKeys = input.jwks !== undefined;
  if (hasUri === hasKeys) {
    errors.push({ field: 'jwks_uri', code: 'required', detail: 'give exactly one of jwks_uri and jwks' });
  }
  if (input.jwksUri !== undefined) {
    const why = pushReceiverUriProblem(input.jwksUri, env);
    if (why) errors.push({ field: 'jwks_uri', code: 'invalid_uri', detail: why });
  }
  if (input.jwks !== undefined) checkInlineKeys(input.jwks.keys, errors);
  checkClaims(input.claims, errors);
  return errors;
}

function checkInlineKeys(keys: Record<string, unknown>[], errors: FieldError[]): void {
  const { minInlineKeys: min, maxInlineKeys: max } = WORKLOAD_LIMITS;
  if (keys.length < min || keys.length > max) {
    errors.push({
      field: 'jwks.keys',
      code: keys.length < min ? 'too_few' : 'too_many',
      detail: `${min} to ${max} keys`,
    });
    return;
  }
  checkPublicKeys(keys, errors);
}

function checkClaims(claims: Record<string, string[]>, errors: FieldError[]): void {
  const names = Object.keys(claims);
  // An issuer such as a public CI service signs tokens for every one of its users: a rule that
  // constrains nothing would trust them all (docs/decisions.md).
  if (names.length === 0) {
    errors.push({ field: 'claims', code: 'too_few', detail: 'constrain at least one claim, such as sub' });
  }
  if (names.length > WORKLOAD_LIMITS.maxClaims) {
    errors.push({ field: 'claims', code: 'too_many', detail: `at most ${WORKLOAD_LIMITS.maxClaims} claims` });
    return;
  }
  const { minClaimValues: min, maxClaimValues: max } = WORKLOAD_LIMITS;
  for (const name of names) {
    const values = claims[name] as string[];
    const field = `claims.${name}`;
    if (!/^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/.test(name)) errors.push({ field, code: 'pattern' });
    else if (values.length < min || values.length > max) {
      errors.push({
        field,
        code: values.length < min ? 'too_few' : 'too_many',
        detail: `${min} to ${max} values`,
      });
    } else if (new Set(values).size !== values.length) errors.push({ field, code: 'duplicate' });
  }
}

/** A claim of a verified assertion meets a rule's allowed values (strings, or numbers and booleans as written). */
export function claimsSatisfied(
  rule: Pick<WorkloadRule, 'claims'>,
  payload: Record<string, unknown>,
): boolean {
  return Object.entries(rule.claims).every(([name, allowed]) => {
    if (!Object.hasOwn(payload, name)) return false;
    const v = payload[name];
    const text =
      typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;
    return text !== null && allowed.includes(text);
  });
}
