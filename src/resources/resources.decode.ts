// Request bodies of the resource, grant and introspector endpoints (spec doc 1, API resource
// (audience) definition; Resources, grants and decisions), the audience format, the rules that
// tie members of one definition together, and If-Match.
import { isSigningAlgorithm, SIGNING_ALGORITHMS } from '../keys/jws.ts';
import {
  array,
  boolean,
  type Decoded,
  type Decoder,
  decodeBody,
  enumOf,
  integer,
  nullable,
  object,
  optional,
  refine,
  string,
  tryDecode,
} from '../platform/http/decode.ts';
import { type FieldError, problem } from '../platform/http/problem.ts';
import {
  exchangePolicyDecoder,
  MAX_AUDIENCE_BYTES,
  MAX_SCOPES_PER_RESOURCE,
  scopeList,
  scopeName,
  subjectTypeList,
} from './grant-spec.ts';
import type { ExchangePolicy, ResourceDefinition, ResourceScope, VerificationMode } from './resource.ts';

// ---- audience --------------------------------------------------------------------------------

// Both forms are checked on the raw string (decision D2: never on a normalised URL) and must
// be written in one spelling: lower-case scheme and host, since tokens compare aud exactly.
const HOST_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const PCHAR = "[A-Za-z0-9\\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2}";
const HTTPS_AUDIENCE = new RegExp(
  `^https://(?:${HOST_LABEL}(?:\\.${HOST_LABEL})*|\\[[0-9a-f:.]+\\])(?::([0-9]{1,5}))?((?:/(?:${PCHAR})*)*)$`,
);
// RFC 8141: NID of 2..32 letters, digits and inner hyphens; NSS of pchar and "/", no r-, q- or
// f-component.
const URN_AUDIENCE = new RegExp(`^urn:[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]:(?:${PCHAR})(?:${PCHAR}|/)*$`);

/** Null when the value is a usable audience, else why not. */
export function audienceProblem(s: string): string | null {
  const detail = 'an https URI without userinfo, query or fragment, or a URN';
  if (s.startsWith('urn:')) return URN_AUDIENCE.test(s) ? null : detail;
  const m = HTTPS_AUDIENCE.exec(s);
  if (!m) return detail;
  const port = m[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535 || port.startsWith('0')))
    return 'invalid port';
  const segments = (m[2] ?? '').split('/');
  if (segments.some((seg) => seg === '.' || seg === '..')) return 'dot segments are not allowed';
  return null;
}

const audience = (): Decoder<string> =>
  refine(string({ minLength: 1, maxBytes: MAX_AUDIENCE_BYTES }), audienceProblem, 'invalid_audience');

// ---- resource definition ---------------------------------------------------------------------

export const VERIFICATION_MODES = ['offline', 'bounded_online', 'strict_online'] as const;
export const TOKEN_FORMATS = ['jwt', 'opaque'] as const;
const SENSITIVITIES = ['', 'low', 'normal', 'high', 'privileged'] as const;
const MAX_AUTH_AGE_SECONDS = 366 * 86400;

// A single printable token: acr values and permission names travel space-delimited.
const token = (max: number, min = 1) =>
  string({ minLength: min, maxLength: max, pattern: min === 0 ? /[\x21-\x7e]*/ : /[\x21-\x7e]+/ });

const scopeDecoder = object({
  name: scopeName(),
  required_permissions: optional(array(token(128), { maxItems: 50, unique: true }), []),
  step_up_acr: optional(token(128, 0)),
  max_auth_age_seconds: optional(integer({ min: 0, max: MAX_AUTH_AGE_SECONDS })),
  sensitivity: optional(enumOf(SENSITIVITIES)),
});

const impersonationPolicyDecoder = object({
  allowed_scopes: optional(scopeList(), []),
  write_scopes: optional(scopeList(), []),
  write_actions: optional(array(token(128), { maxItems: 200, unique: true }), []),
  support_client_ids: optional(
    array(string({ minLength: 1, maxLength: 128 }), { maxItems: 50, unique: true }),
    [],
  ),
  contract_version: optional(string({ maxLength: 64 }), ''),
});

const signingAlgorithm = refine(
  string(),
  (alg) => (alg === '' || isSigningAlgorithm(alg) ? null : `"" or one of: ${SIGNING_ALGORITHMS.join(', ')}`),
  'not_allowed',
);

const resourceBody = object({
  name: string({ minLength: 1, maxLength: 200, pattern: /[^\p{Cc}]+/u }),
  audience: audience(),
  verification_mode: optional(enumOf(VERIFICATION_MODES)),
  token_format: optional(enumOf(TOKEN_FORMATS), 'jwt'),
  access_token_ttl_seconds: optional(integer({ min: 30, max: 3600 }), 300),
  scopes: optional(array(scopeDecoder, { maxItems: MAX_SCOPES_PER_RESOURCE }), []),
  // Spec decoding rule 5: null is meaningful here, and means the default.
  requires_organization: optional(nullable(boolean())),
  impersonation_enabled: optional(boolean(), false),
  impersonation_policy: optional(impersonationPolicyDecoder),
  signing_algorithm: optional(signingAlgorithm, ''),
});

/** A complete definition: PUT replaces every member, so omitted members take these defaults. */
export type ResourceInput = Omit<ResourceDefinition, 'id' | 'builtin' | 'state' | 'version'>;

function toScope(s: Decoded<typeof scopeDecoder>): ResourceScope {
  return {
    name: s.name,
    requiredPermissions: s.requiredPermissions,
    ...(s.stepUpAcr ? { stepUpAcr: s.stepUpAcr } : {}),
    ...(s.maxAuthAgeSeconds !== undefined ? { maxAuthAgeSeconds: s.maxAuthAgeSeconds } : {}),
    // Spec doc 1, Value formats: "" is stored as normal.
    sensitivity: s.sensitivity ? s.sensitivity : 'normal',
  };
}

/**
 * Without an explicit mode, a definition gets the weakest mode its other members allow: opaque
 * tokens and support access both need the service online.
 */
const defaultMode = (b: Decoded<typeof resourceBody>): VerificationMode =>
  b.impersonationEnabled ? 'strict_online' : b.tokenFormat === 'opaque' ? 'strict_online' : 'offline';

function toResourceInput(b: Decoded<typeof resourceBody>): ResourceInput {
  return {
    name: b.name,
    audience: b.audience,
    verificationMode: b.verificationMode ?? defaultMode(b),
    tokenFormat: b.tokenFormat,
    accessTokenTtlSeconds: b.accessTokenTtlSeconds,
    scopes: b.scopes.map(toScope),
    requiresOrganization: b.requiresOrganization ?? true,
    impersonationEnabled: b.impersonationEnabled,
    impersonationPolicy: b.impersonationPolicy ?? null,
    signingAlgorithm: b.signingAlgorithm,
  };
}

/** Rules across members of one definition. */
export function resourceRuleProblems(r: ResourceInput): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  r.scopes.forEach((s, i) => {
    if (seen.has(s.name))
      out.push({ field: `scopes[${i}].name`, code: 'duplicate', detail: 'repeats a scope' });
    seen.add(s.name);
  });
  // Spec doc 1, API resource definition: the two cases the service enforces.
  if (r.tokenFormat === 'opaque' && r.verificationMode === 'offline')
    out.push({
      field: 'verification_mode',
      code: 'not_allowed',
      detail: 'opaque tokens cannot be verified offline',
    });
  if (r.impersonationEnabled && r.verificationMode !== 'strict_online')
    out.push({
      field: 'impersonation_enabled',
      code: 'not_allowed',
      detail: 'support access needs strict_online',
    });
  const p = r.impersonationPolicy;
  if (p) {
    for (const [list, field] of [
      [p.allowedScopes, 'allowed_scopes'],
      [p.writeScopes, 'write_scopes'],
    ] as const) {
      list.forEach((s, i) => {
        if (!seen.has(s))
          out.push({
            field: `impersonation_policy.${field}[${i}]`,
            code: 'undeclared_scope',
            detail: 'not a scope of this resource',
          });
      });
    }
  }
  return out;
}

/**
 * A resource definition of a configuration document: the input with defaults applied, or every
 * problem with it (shape and rules alike), and the wire names of the members it gave.
 */
export function checkResourceInput(
  body: unknown,
): { ok: true; value: ResourceInput; given: Set<string> } | { ok: false; errors: FieldError[] } {
  const r = tryDecode(resourceBody, body);
  if (!r.ok) return r;
  const value = toResourceInput(r.value);
  const errors = resourceRuleProblems(value);
  if (errors.length > 0) return { ok: false, errors };
  const given = new Set(
    Object.entries(body as Record<string, unknown>)
      // Decoding rule 5: null is absent, except for requires_organization (where it means the default).
      .filter(([k, v]) => v !== undefined && (v !== null || k.toLowerCase() === 'requires_organization'))
      .map(([k]) => k.toLowerCase()),
  );
  return { ok: true, value, given };
}

export function decodeResource(body: unknown): ResourceInput {
  const input = toResourceInput(decodeBody(resourceBody, body));
  const errors = resourceRuleProblems(input);
  if (errors.length > 0) throw problem.validation(errors);
  return input;
}

// ---- grants and introspectors ----------------------------------------------------------------

const grantBody = object({
  allowed_scopes: optional(scopeList(), []),
  subject_types: optional(subjectTypeList()),
  exchange_policy: optional(exchangePolicyDecoder()),
});

export interface GrantInput {
  allowedScopes: string[];
  subjectTypes?: string[];
  exchangePolicy?: ExchangePolicy;
}

export const decodeGrant = (body: unknown): GrantInput => decodeBody(grantBody, body);

const introspectorBody = object({ client: string({ minLength: 1, maxLength: 128 }) });

export const decodeIntrospector = (body: unknown): { client: string } => decodeBody(introspectorBody, body);

// ---- If-Match --------------------------------------------------------------------------------

export const etagOf = (version: number): string => `"${version}"`;

const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e]*)"$/;

/**
 * RFC 9110 section 13.1.1: `*` matches any current representation; otherwise a list of entity
 * tags compared strongly, so a weak tag never matches. A header that is not such a list matches
 * nothing, which answers 412 like a stale tag.
 */
export function ifMatchSatisfied(header: string | undefined, version: number): boolean {
  if (header === undefined) return true;
  const value = header.trim();
  if (value === '*') return true;
  const current = etagOf(version);
  let matched = false;
  for (const item of value.split(',')) {
    const m = ENTITY_TAG.exec(item.trim());
    if (!m) return false;
    if (!m[1] && item.trim() === current) matched = true;
  }
  return matched;
}
