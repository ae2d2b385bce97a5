// What a hook's answer means (docs/hooks.md), as pure functions: the outcome of one call, the
// decision of a registration hook, and the claims a token hook adds. A claim the service sets
// itself is never taken from a hook (an issuer, subject, audience, lifetime, binding or any other
// protocol claim of RFC 7519 section 4.1, RFC 9068 section 2.2, OpenID Connect Core section 2,
// RFC 8693 section 4 and RFC 7800 section 3).
import type { HookKind } from './hooks.repo.ts';

/** At most this much of an answer is read; a longer one is not an answer (docs/decisions.md). */
export const MAX_ANSWER_BYTES = 16 * 1024;
const MAX_CLAIMS = 32;
const CLAIM_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/;

export const PROTECTED_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'cnf',
  'client_id',
  'scope',
  'auth_time',
  'acr',
  'amr',
  'sid',
  'azp',
  'nonce',
  'at_hash',
  'c_hash',
  's_hash',
  'act',
  'may_act',
  'org_id',
  'grant_client_id',
  'support_grant_id',
  'typ',
  'events',
  'sub_jwk',
]);

/** The outcome label of service_hook_calls_total: a closed list. */
export type HookOutcome =
  | 'ok'
  | 'denied'
  | 'timeout'
  | 'http_error'
  | 'invalid_response'
  | 'network_error'
  | 'egress_denied';

export type HookClaims = Record<string, unknown>;

export interface TokenClaims {
  accessToken: HookClaims;
  idToken: HookClaims;
}

export type Answer =
  | { kind: 'allow'; claims?: TokenClaims }
  | { kind: 'deny'; reason: string | null }
  | { kind: 'invalid' };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The claims of one member of a token hook's answer; protected and malformed names are left out. */
export function acceptedClaims(raw: unknown): HookClaims | null {
  if (raw === undefined) return {};
  if (!isObject(raw)) return null;
  const out: HookClaims = {};
  for (const [name, value] of Object.entries(raw)) {
    if (Object.keys(out).length >= MAX_CLAIMS) break;
    if (!CLAIM_NAME.test(name) || PROTECTED_CLAIMS.has(name)) continue;
    if (value === undefined || value === null) continue;
    out[name] = value;
  }
  return out;
}

/** Reads a 2xx body (already bounded in size) by the rules of the hook's kind. */
export function readAnswer(kind: HookKind, body: string): Answer {
  if (kind === 'after_sign_in') return { kind: 'allow' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { kind: 'invalid' };
  }
  if (!isObject(parsed)) return { kind: 'invalid' };
  if (kind === 'before_registration') {
    if (parsed.decision === 'allow') return { kind: 'allow' };
    if (parsed.decision !== 'deny') return { kind: 'invalid' };
    const reason =
      typeof parsed.reason === 'string' ? parsed.reason.replace(/\p{Cc}/gu, '').slice(0, 200) : null;
    return { kind: 'deny', reason };
  }
  const accessToken = acceptedClaims(parsed.access_token);
  const idToken = acceptedClaims(parsed.id_token);
  if (!accessToken || !idToken) return { kind: 'invalid' };
  return { kind: 'allow', claims: { accessToken, idToken } };
}

/** Claims of several hooks, the later hook (by id) winning a name both set. */
export function mergeClaims(all: readonly TokenClaims[]): TokenClaims {
  const out: TokenClaims = { accessToken: {}, idToken: {} };
  for (const c of all) {
    Object.assign(out.accessToken, c.accessToken);
    Object.assign(out.idToken, c.idToken);
  }
  return out;
}

/** Drops protected claims again where the claims are applied (defence in depth). */
export function withoutProtected(claims: HookClaims | undefined): HookClaims {
  const out: HookClaims = {};
  for (const [k, v] of Object.entries(claims ?? {})) if (!PROTECTED_CLAIMS.has(k)) out[k] = v;
  return out;
}
