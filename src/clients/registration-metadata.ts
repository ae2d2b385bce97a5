// Client metadata of dynamic registration (RFC 7591 section 2; docs/oauth-registration.md): the
// members this service reads, their checks, and the client they describe. Pure. Members it does not
// know are ignored, as RFC 7591 section 2 asks, and never stored or echoed; the members it knows are
// checked by the same rules as an administrator's client (client-rules.ts: redirect URIs under the
// RedirectURI rules, 1..20 of them, grants, methods and keys).
import type { FieldError } from '../platform/http/problem.ts';
import {
  type ClientDraft,
  checkClientDraft,
  GRANT,
  type JwkSet,
  TOKEN_ENDPOINT_AUTH_METHODS,
} from './client-rules.ts';
import type { ClientType } from './clients.repo.ts';
import { validateOrigin } from './origin.ts';
import type { Environment } from './redirect-uri.ts';
import { TLS_SUBJECT_MEMBERS } from './tls-client-auth.ts';
import type { TlsClientAuthInput } from './tls-client-auth-rules.ts';

/** The RFC 7591 section 3.2.2 error a refused registration answers. */
export type RegistrationErrorCode = 'invalid_redirect_uri' | 'invalid_client_metadata';

export interface MetadataRefusal {
  ok: false;
  error: RegistrationErrorCode;
  errors: FieldError[];
}

/** Informational members shown back to the client and to administrators (never judged further). */
export interface DisplayMetadata {
  client_uri?: string;
  logo_uri?: string;
  tos_uri?: string;
  policy_uri?: string;
  contacts?: string[];
  software_id?: string;
  software_version?: string;
  application_type: 'web' | 'native';
}

export interface RegisteredMetadata {
  ok: true;
  name: string | null;
  type: ClientType;
  draft: ClientDraft;
  /** The OpenID scopes the client registered, all within the policy's open_scopes. */
  scopes: string[];
  /** OpenID Back-Channel Logout 1.0, section 2.2: whether logout tokens must carry sid. */
  backchannelLogoutSessionRequired: boolean;
  display: DisplayMetadata;
}

const AUTH_METHODS = TOKEN_ENDPOINT_AUTH_METHODS;
// A registered client signs people in; it gets no service principal and no token exchange.
const REGISTRABLE_GRANTS: readonly string[] = [GRANT.code, GRANT.refresh];
const MAX_NAME = 200;
const MAX_URI_BYTES = 2000;
const MAX_CONTACTS = 10;
const MAX_SOFTWARE = 200;
const CONTROL = /[\p{Cc}\p{Cf}]/u;

type Json = Record<string, unknown>;

function stringList(v: unknown, field: string, errors: FieldError[], maxItem = MAX_URI_BYTES): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || Buffer.byteLength(x) > maxItem)) {
    errors.push({ field, code: 'type', detail: 'an array of strings' });
    return [];
  }
  return v as string[];
}

function text(v: unknown, field: string, max: number, errors: FieldError[]): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > max || CONTROL.test(v)) {
    errors.push({
      field,
      code: 'type',
      detail: `a string of 1..${max} characters without control characters`,
    });
    return undefined;
  }
  return v;
}

function webUri(v: unknown, field: string, env: Environment, errors: FieldError[]): string | undefined {
  const s = text(v, field, MAX_URI_BYTES, errors);
  if (s === undefined) return undefined;
  let url: URL | null = null;
  try {
    url = new URL(s);
  } catch {
    url = null;
  }
  const schemeOk = url?.protocol === 'https:' || (env !== 'production' && url?.protocol === 'http:');
  if (!url || !schemeOk || url.username !== '' || url.password !== '') {
    errors.push({ field, code: 'invalid_uri', detail: 'an absolute https URL' });
    return undefined;
  }
  return s;
}

/**
 * The browser origins of a registered single-page client: those of its redirect URIs (Keycloak's
 * `+` web origin), so the browser app can reach the token endpoint; none for other types.
 */
function originsOf(type: ClientType, redirectUris: readonly string[]): string[] {
  if (type !== 'spa') return [];
  const out = new Set<string>();
  for (const uri of redirectUris) {
    try {
      const v = validateOrigin(new URL(uri).origin);
      if (v.ok) out.add(v.origin);
    } catch {
      // A redirect URI that does not parse is refused by its own rule.
    }
  }
  return [...out];
}

/** What a client's type is, from its authentication method and application type. */
function typeOf(method: string, applicationType: 'web' | 'native'): ClientType {
  if (method !== 'none') return 'web';
  return applicationType === 'native' ? 'native' : 'spa';
}

/**
 * Reads a registration (or RFC 7592 replacement) body against the realm's open_scopes. Either the
 * client it describes or every problem found, classed as RFC 7591 names them: anything about
 * redirect URIs is invalid_redirect_uri, the rest invalid_client_metadata.
 */
export function readClientMetadata(
  body: unknown,
  openScopes: readonly string[],
  env: Environment,
): RegisteredMetadata | MetadataRefusal {
  const errors: FieldError[] = [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: 'invalid_client_metadata', errors: [{ field: '', code: 'type' }] };
  }
  const m = body as Json;

  const method = m.token_endpoint_auth_method ?? 'client_secret_basic';
  if (typeof method !== 'string' || !AUTH_METHODS.includes(method))
    errors.push({
      field: 'token_endpoint_auth_method',
      code: 'not_allowed',
      detail: AUTH_METHODS.join(', '),
    });

  const appType = m.application_type ?? 'web';
  if (appType !== 'web' && appType !== 'native')
    errors.push({ field: 'application_type', code: 'not_allowed', detail: 'web or native' });

  const grantTypes =
    m.grant_types === undefined ? [GRANT.code] : stringList(m.grant_types, 'grant_types', errors);
  grantTypes.forEach((g, i) => {
    if (!REGISTRABLE_GRANTS.includes(g))
      errors.push({ field: `grant_types[${i}]`, code: 'not_allowed', detail: REGISTRABLE_GRANTS.join(', ') });
  });
  const responseTypes =
    m.response_types === undefined ? ['code'] : stringList(m.response_types, 'response_types', errors);
  if (responseTypes.length !== 1 || responseTypes[0] !== 'code')
    errors.push({ field: 'response_types', code: 'not_allowed', detail: 'only code' });

  let scopes = [...openScopes];
  if (m.scope !== undefined) {
    if (typeof m.scope !== 'string' || m.scope.length > 1000) {
      errors.push({ field: 'scope', code: 'type', detail: 'space-separated scope names' });
    } else {
      scopes = [...new Set(m.scope.split(' ').filter((s) => s !== ''))];
      const outside = scopes.filter((s) => !openScopes.includes(s));
      if (outside.length > 0)
        errors.push({
          field: 'scope',
          code: 'not_allowed',
          detail: `registered clients may ask for: ${openScopes.join(' ')}`,
        });
    }
  }
  if (m.jwks_uri !== undefined)
    errors.push({ field: 'jwks_uri', code: 'unsupported', detail: 'register the keys inline with jwks' });

  let jwks: JwkSet | null = null;
  if (m.jwks !== undefined) {
    const keys = (m.jwks as Json | null)?.keys;
    if (
      typeof m.jwks !== 'object' ||
      m.jwks === null ||
      !Array.isArray(keys) ||
      keys.some((k) => typeof k !== 'object' || k === null || Array.isArray(k))
    )
      errors.push({ field: 'jwks', code: 'type', detail: 'a JWK set' });
    else jwks = { keys: keys as Json[] };
  }

  const tlsClientAuth = tlsMembersOf(m, errors);

  const display: DisplayMetadata = { application_type: appType === 'native' ? 'native' : 'web' };
  for (const field of ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri'] as const) {
    const v = webUri(m[field], field, env, errors);
    if (v !== undefined) display[field] = v;
  }
  if (m.contacts !== undefined) {
    const contacts = stringList(m.contacts, 'contacts', errors, 254);
    if (contacts.length > MAX_CONTACTS)
      errors.push({ field: 'contacts', code: 'too_many', detail: `at most ${MAX_CONTACTS}` });
    else if (contacts.some((c) => c.length === 0 || CONTROL.test(c)))
      errors.push({ field: 'contacts', code: 'type' });
    else display.contacts = contacts;
  }
  for (const field of ['software_id', 'software_version'] as const) {
    const v = text(m[field], field, MAX_SOFTWARE, errors);
    if (v !== undefined) display[field] = v;
  }
  const name = text(m.client_name, 'client_name', MAX_NAME, errors) ?? null;

  const redirectUris =
    m.redirect_uris === undefined ? [] : stringList(m.redirect_uris, 'redirect_uris', errors);
  const logoutUris =
    m.post_logout_redirect_uris === undefined
      ? []
      : stringList(m.post_logout_redirect_uris, 'post_logout_redirect_uris', errors);

  // Back-Channel Logout 1.0, section 2.2: judged by the administrator's rule in checkClientDraft.
  const bclUri = m.backchannel_logout_uri;
  if (bclUri !== undefined && bclUri !== null && typeof bclUri !== 'string')
    errors.push({ field: 'backchannel_logout_uri', code: 'type', detail: 'a URL string' });
  const bclSession = m.backchannel_logout_session_required ?? false;
  if (typeof bclSession !== 'boolean')
    errors.push({ field: 'backchannel_logout_session_required', code: 'type', detail: 'true or false' });

  const type = typeOf(typeof method === 'string' ? method : 'client_secret_basic', display.application_type);
  const draft: ClientDraft = {
    type,
    tokenEndpointAuthMethod: typeof method === 'string' ? method : 'client_secret_basic',
    grantTypes,
    redirectUris,
    postLogoutRedirectUris: logoutUris,
    backchannelLogoutUri: typeof bclUri === 'string' ? bclUri : null,
    allowedOrigins: [],
    jwks,
    ...(tlsClientAuth ? { tlsClientAuth } : {}),
  };
  if (errors.length === 0) {
    const verdict = checkClientDraft(draft, env, {
      redirectUris: true,
      postLogoutRedirectUris: true,
      jwks: true,
      tlsClientAuth: true,
    });
    errors.push(...verdict.errors);
    // Derived from redirect URIs that passed their rules, so never a reason of their own to refuse.
    if (verdict.errors.length === 0) draft.allowedOrigins = originsOf(type, redirectUris);
  }
  if (errors.length > 0) {
    const aboutRedirects = errors.some((e) => e.field.startsWith('redirect_uris'));
    return { ok: false, error: aboutRedirects ? 'invalid_redirect_uri' : 'invalid_client_metadata', errors };
  }
  return {
    ok: true,
    name,
    type,
    draft,
    scopes,
    display,
    backchannelLogoutSessionRequired: bclSession === true,
  };
}

/** The tls_client_auth members (RFC 8705 section 2.1.2) of registration metadata, as given. */
function tlsMembersOf(m: Json, errors: FieldError[]): TlsClientAuthInput | undefined {
  const out: TlsClientAuthInput = {};
  for (const member of TLS_SUBJECT_MEMBERS) {
    const v = m[member];
    if (v === undefined) continue;
    if (typeof v === 'string') out[member] = v;
    else errors.push({ field: member, code: 'type', detail: 'a string' });
  }
  const anchors = m.tls_client_auth_trust_anchors;
  if (anchors !== undefined)
    out.tls_client_auth_trust_anchors = stringList(
      anchors,
      'tls_client_auth_trust_anchors',
      errors,
      16 * 1024,
    );
  return Object.keys(out).length > 0 ? out : undefined;
}
