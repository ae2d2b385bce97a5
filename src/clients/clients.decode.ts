// Bodies and queries of the clients administration API (docs/api-clients.md). A body of the wrong
// shape (unknown member, wrong JSON type) is 400 invalid_request as for every strict JSON body;
// a body of the right shape with values the rules refuse is 422 validation_failed. Rules about
// URIs, origins, grants, methods and keys are in client-rules.ts.
import {
  array,
  boolean,
  type Decoded,
  enumOf,
  nullable,
  object,
  optional,
  record,
  refine,
  string,
  unknownJson,
} from '../platform/http/decode.ts';
import { type FieldError, problem } from '../platform/http/problem.ts';
import { decodeSamlSettings, decodeSamlSettingsPatch } from './saml-clients.ts';

export const CLIENT_TYPES = ['web', 'spa', 'native', 'device', 'service', 'saml'] as const;
export const CONSENT_MODES = ['implicit', 'required'] as const;
export const CLIENT_STATES = ['active', 'disabled'] as const;
export const ID_TOKEN_CLAIMS = ['standard', 'minimal'] as const;

const withoutControls = (v: string) => (/[\p{Cc}\p{Cf}]/u.test(v) ? 'no control characters' : null);

/** RFC 6749 client ids are visible ASCII; space is left out so ids survive Basic and paths. */
const clientId = string({ minLength: 1, maxLength: 128, pattern: /[\x21-\x7e]+/ });
const name = refine(string({ minLength: 1, maxLength: 200 }), withoutControls, 'control_character');
const description = refine(string({ maxLength: 1000 }), withoutControls, 'control_character');
// Item rules (URI shapes, counts) are value rules checked in client-rules.ts.
const uriList = array(string());
const jwk = record(unknownJson(), { maxEntries: 32, maxBytes: 16 * 1024 });
const jwks = object({ keys: array(jwk) });
const tokenPolicy = object({ require_mfa: optional(boolean()) });
// tls_client_auth (RFC 8705 section 2.1.2); values and counts are judged in tls-client-auth-rules.ts.
const tlsSubject = string({ maxLength: 2048 });
const tlsMembers = {
  tls_client_auth_subject_dn: optional(tlsSubject),
  tls_client_auth_san_dns: optional(tlsSubject),
  tls_client_auth_san_uri: optional(tlsSubject),
  tls_client_auth_san_ip: optional(tlsSubject),
  tls_client_auth_san_email: optional(tlsSubject),
  tls_client_auth_trust_anchors: optional(array(string({ maxLength: 16 * 1024 }))),
};

export const decodeCreateClient = object({
  client_id: clientId,
  name,
  description: optional(description),
  type: enumOf(CLIENT_TYPES),
  redirect_uris: optional(uriList),
  post_logout_redirect_uris: optional(uriList),
  allowed_origins: optional(uriList),
  grant_types: optional(array(string({ maxLength: 256 }))),
  token_endpoint_auth_method: optional(string({ maxLength: 64 })),
  consent_mode: optional(enumOf(CONSENT_MODES)),
  token_policy: optional(tokenPolicy),
  allow_remember_me: optional(boolean()),
  id_token_claims: optional(enumOf(ID_TOKEN_CLAIMS)),
  require_pushed_authorization_requests: optional(boolean()),
  backchannel_logout_uri: optional(string()),
  backchannel_logout_session_required: optional(boolean()),
  jwks: optional(jwks),
  ...tlsMembers,
  /** Only for type saml, and required there (saml-clients.ts). */
  saml: optional(decodeSamlSettings),
});
export type CreateClientInput = Decoded<typeof decodeCreateClient>;

/**
 * Members replace the stored ones; absent members keep theirs. client_id, type and
 * token_endpoint_auth_method are accepted only with their current value (422 immutable otherwise),
 * so a client read with GET can be sent back after editing.
 */
export const decodeUpdateClient = object({
  client_id: optional(string()),
  type: optional(string()),
  token_endpoint_auth_method: optional(string()),
  name: optional(name),
  description: nullable(optional(description)),
  redirect_uris: optional(uriList),
  post_logout_redirect_uris: optional(uriList),
  allowed_origins: optional(uriList),
  grant_types: optional(array(string({ maxLength: 256 }))),
  consent_mode: optional(enumOf(CONSENT_MODES)),
  token_policy: optional(tokenPolicy),
  allow_remember_me: optional(boolean()),
  id_token_claims: optional(enumOf(ID_TOKEN_CLAIMS)),
  require_pushed_authorization_requests: optional(boolean()),
  backchannel_logout_uri: nullable(optional(string())),
  backchannel_logout_session_required: optional(boolean()),
  jwks: optional(jwks),
  ...tlsMembers,
  /** Only for type saml: the SAML members to change (saml-clients.ts). */
  saml: optional(decodeSamlSettingsPatch),
});
export type UpdateClientInput = Decoded<typeof decodeUpdateClient>;

/** Optional body of a secret rotation. */
export const decodeIssueSecret = object({
  expires_at: optional(
    refine(
      string({ maxLength: 64 }),
      (v) =>
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(v) &&
        !Number.isNaN(Date.parse(v))
          ? null
          : 'an RFC 3339 date-time',
      'pattern',
    ),
  ),
});

// ---- list query --------------------------------------------------------------------------------

export interface ListQuery {
  limit: number;
  cursor: string | null;
  type: (typeof CLIENT_TYPES)[number] | null;
  state: (typeof CLIENT_STATES)[number] | null;
}

const QUERY_MEMBERS = new Set(['limit', 'cursor', 'type', 'state']);

/** Query parameters of GET /clients; anything unexpected is 400 invalid_request. */
export function decodeListQuery(
  query: unknown,
  limits: { defaultPageSize: number; maxPageSize: number },
): ListQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const [k, v] of Object.entries(q)) {
    if (!QUERY_MEMBERS.has(k)) errors.push({ field: k, code: 'unknown_member' });
    else if (typeof v !== 'string') errors.push({ field: k, code: 'type', detail: 'given once' });
  }
  const str = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : null);
  let limit = limits.defaultPageSize;
  const rawLimit = str('limit');
  if (rawLimit !== null) {
    if (!/^[0-9]{1,9}$/.test(rawLimit) || Number(rawLimit) < 1) {
      errors.push({ field: 'limit', code: 'type', detail: 'a positive integer' });
    } else limit = Math.min(Number(rawLimit), limits.maxPageSize); // larger values are reduced
  }
  const oneOf = <V extends readonly string[]>(k: string, values: V): V[number] | null => {
    const v = str(k);
    if (v === null) return null;
    if ((values as readonly string[]).includes(v)) return v as V[number];
    errors.push({ field: k, code: 'not_allowed', detail: `one of: ${values.join(', ')}` });
    return null;
  };
  const type = oneOf('type', CLIENT_TYPES);
  const state = oneOf('state', CLIENT_STATES);
  if (errors.length > 0) throw problem.invalidRequest('invalid query parameters', errors);
  return { limit, cursor: str('cursor'), type, state };
}

// Keyset cursor: the last row id of the page, bound to realm, route and filters (spec doc 2,
// Limits: a cursor of another route is 400). It carries nothing secret, so it is not sealed.
interface CursorBody {
  v: 1;
  realm: string;
  route: string;
  filter: string;
  after: string;
}

export function encodeCursor(c: Omit<CursorBody, 'v'>): string {
  return Buffer.from(JSON.stringify({ v: 1, ...c }), 'utf8').toString('base64url');
}

/** The row id to continue after; 400 invalid_request for a cursor of anything else. */
export function decodeCursor(raw: string, expect: Omit<CursorBody, 'v' | 'after'>): string {
  const invalid = () => problem.invalidRequest('invalid cursor');
  if (raw.length > 512 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid();
  let body: Partial<CursorBody>;
  try {
    body = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<CursorBody>;
  } catch {
    throw invalid();
  }
  if (
    typeof body !== 'object' ||
    body === null ||
    body.v !== 1 ||
    body.realm !== expect.realm ||
    body.route !== expect.route ||
    body.filter !== expect.filter ||
    typeof body.after !== 'string' ||
    !/^cli_[0-9a-z]{26}$/.test(body.after)
  ) {
    throw invalid();
  }
  return body.after;
}
