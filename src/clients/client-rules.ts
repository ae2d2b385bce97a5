// What a client of each type may register (docs/api-clients.md): grant types, token endpoint
// authentication, redirect and logout URIs (spec doc 1, Value formats, RedirectURI row;
// decisions D1-D2), browser origins (Origin row) and private_key_jwt public keys. Pure: every
// rule returns field errors, so one request reports everything wrong at once.
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import type { FieldError } from '../platform/http/problem.ts';
import type { ClientType } from './clients.repo.ts';
import { checkCertificateKeys } from './mtls-client-rules.ts';
import { validateOrigin } from './origin.ts';
import { type Environment, validateRedirectUri } from './redirect-uri.ts';
import { checkTlsClientAuth, type TlsClientAuthInput } from './tls-client-auth-rules.ts';

export const GRANT = {
  code: 'authorization_code',
  refresh: 'refresh_token',
  clientCredentials: 'client_credentials',
  exchange: 'urn:ietf:params:oauth:grant-type:token-exchange',
  device: 'urn:ietf:params:oauth:grant-type:device_code',
  jwtBearer: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
} as const;

// Token exchange needs an authenticated (confidential) client, so only web and service have it.
// The device grant (RFC 8628) is for public clients without a browser of their own: device and
// native clients (the built-in identity-cli is native).
const GRANTS_BY_TYPE: Record<ClientType, readonly string[]> = {
  web: [GRANT.code, GRANT.refresh, GRANT.exchange],
  spa: [GRANT.code, GRANT.refresh],
  native: [GRANT.code, GRANT.refresh, GRANT.device],
  device: [GRANT.code, GRANT.refresh, GRANT.device],
  service: [GRANT.clientCredentials, GRANT.exchange, GRANT.jwtBearer],
  // A SAML service provider signs users in through ProudAuth's own SAML continuation (saml-clients.ts).
  saml: [GRANT.code],
};
const KNOWN_GRANTS: ReadonlySet<string> = new Set(Object.values(GRANT));

const CONFIDENTIAL_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'tls_client_auth',
  'self_signed_tls_client_auth',
] as const;
/** Every token endpoint authentication method a client may register (discovery lists the same). */
export const TOKEN_ENDPOINT_AUTH_METHODS: readonly string[] = [...CONFIDENTIAL_METHODS, 'none'];

const METHODS_BY_TYPE: Record<ClientType, readonly string[]> = {
  web: CONFIDENTIAL_METHODS,
  // `none` only for a workload that proves itself with an outside issuer's assertion (below).
  service: [...CONFIDENTIAL_METHODS, 'none'],
  spa: ['none'],
  native: ['none'],
  device: ['none'],
  saml: ['none'],
};

export const MAX_REDIRECT_URIS = 20;
export const MAX_ALLOWED_ORIGINS = 20;
export const MAX_JWKS_KEYS = 20;

export const defaultGrantTypes = (type: ClientType): string[] =>
  type === 'service'
    ? [GRANT.clientCredentials]
    : type === 'saml'
      ? [GRANT.code]
      : [GRANT.code, GRANT.refresh];

export const defaultAuthMethod = (type: ClientType): string =>
  type === 'web' || type === 'service' ? 'client_secret_basic' : 'none';

export interface JwkSet {
  keys: Record<string, unknown>[];
}

/** The members whose combination the rules judge. */
export interface ClientDraft {
  type: ClientType;
  tokenEndpointAuthMethod: string;
  grantTypes: string[];
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  /** Judged only when the request gave one (null clears it). */
  backchannelLogoutUri?: string | null;
  allowedOrigins: string[];
  jwks: JwkSet | null;
  /** The tls_client_auth members (tls-client-auth-rules.ts); judged only when given. */
  tlsClientAuth?: TlsClientAuthInput;
  /** When the draft is judged: CA certificates must be unexpired then. */
  now?: Date;
}

/** Which members came from the request: stored values are not re-judged item by item. */
export type GivenMembers = Partial<
  Record<'redirectUris' | 'postLogoutRedirectUris' | 'allowedOrigins' | 'jwks' | 'tlsClientAuth', boolean>
>;

export interface DraftVerdict {
  errors: FieldError[];
  /** Origins in their canonical form (trailing slash removed). */
  allowedOrigins: string[];
}

export function checkClientDraft(d: ClientDraft, env: Environment, given: GivenMembers): DraftVerdict {
  const errors: FieldError[] = [];
  checkAuthMethod(d, errors);
  const grantsOk = checkGrantTypes(d, errors);
  // Only a client that signs users in through the authorization endpoint has redirect URIs. With
  // a broken grant list the count is not judged, only the URIs themselves.
  const usesCode = d.grantTypes.includes(GRANT.code);
  // A SAML client's one redirect URI is derived, never registered (saml-clients.ts).
  const min = grantsOk && usesCode && d.type !== 'saml' ? 1 : 0;
  const max = (grantsOk && !usesCode) || d.type === 'saml' ? 0 : MAX_REDIRECT_URIS;
  const uriCtx = { clientType: d.type, environment: env };
  checkUriList('redirect_uris', d.redirectUris, min, max, errors, (u) =>
    given.redirectUris ? verdictCode(validateRedirectUri(u, uriCtx)) : null,
  );
  checkUriList('post_logout_redirect_uris', d.postLogoutRedirectUris, 0, max, errors, (u) =>
    given.postLogoutRedirectUris ? verdictCode(validateRedirectUri(u, uriCtx)) : null,
  );
  if (typeof d.backchannelLogoutUri === 'string') {
    const why = pushReceiverUriProblem(d.backchannelLogoutUri, env);
    if (why) errors.push({ field: 'backchannel_logout_uri', code: 'invalid_uri', detail: why });
  }
  const allowedOrigins = checkOrigins(d, errors, given.allowedOrigins === true);
  checkJwks(d, errors, given.jwks === true);
  if (given.tlsClientAuth === true || d.tlsClientAuth !== undefined)
    checkTlsClientAuth(d.tokenEndpointAuthMethod, d.tlsClientAuth ?? {}, d.now ?? null, errors);
  return { errors, allowedOrigins };
}

export const MAX_BACKCHANNEL_URI_CHARS = 2048;

/**
 * Where a receiver takes pushed tokens: a back-channel logout URI (OpenID Connect Back-Channel
 * Logout 1.0, section 2.2) or a Shared Signals push endpoint (RFC 8935). An absolute
 * http(s) URL in its canonical form, https in production, with no fragment and no user
 * information; a query is allowed. Where it may connect to is the egress guard's judgement at
 * every delivery (docs/logout-and-signals.md). Answers why it is refused, or null.
 */
export function pushReceiverUriProblem(raw: string, env: Environment): string | null {
  if (raw.length > MAX_BACKCHANNEL_URI_CHARS) return `at most ${MAX_BACKCHANNEL_URI_CHARS} characters`;
  if (/[\s\\\p{Cc}]/u.test(raw)) return 'no spaces, backslashes or control characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'an absolute http or https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'an absolute http or https URL';
  if (url.username || url.password) return 'no user information';
  if (raw.includes('#')) return 'no fragment';
  if (url.href !== raw && url.href !== `${raw}/`) return 'write the URL in its canonical form';
  if (env === 'production' && url.protocol !== 'https:') return 'https is required in production';
  return null;
}

const verdictCode = (v: { ok: true } | { ok: false; reason: string }): string | null =>
  v.ok ? null : v.reason;

function checkAuthMethod(d: ClientDraft, errors: FieldError[]): void {
  const allowed = METHODS_BY_TYPE[d.type];
  if (!allowed.includes(d.tokenEndpointAuthMethod)) {
    errors.push({
      field: 'token_endpoint_auth_method',
      code: 'not_allowed',
      detail: `a ${d.type} client uses one of: ${allowed.join(', ')}`,
    });
  } else if (
    d.type === 'service' &&
    d.tokenEndpointAuthMethod === 'none' &&
    d.grantTypes.some((g) => g !== GRANT.jwtBearer)
  ) {
    // Without a secret or a key of its own, a service client is only as good as the outside
    // issuer's assertion its workload federation rules accept (docs/workload-federation.md).
    errors.push({
      field: 'token_endpoint_auth_method',
      code: 'not_allowed',
      detail: `a service client without credentials may use only the ${GRANT.jwtBearer} grant`,
    });
  }
}

/** True when the list broke no rule. */
function checkGrantTypes(d: ClientDraft, errors: FieldError[]): boolean {
  const before = errors.length;
  if (d.grantTypes.length === 0) {
    errors.push({ field: 'grant_types', code: 'too_few', detail: 'at least 1 item' });
    return false;
  }
  const allowed = GRANTS_BY_TYPE[d.type];
  const seen = new Set<string>();
  d.grantTypes.forEach((g, i) => {
    const field = `grant_types[${i}]`;
    if (seen.has(g)) errors.push({ field, code: 'duplicate', detail: 'repeats an earlier item' });
    else if (!KNOWN_GRANTS.has(g)) errors.push({ field, code: 'unsupported', detail: 'unknown grant type' });
    else if (!allowed.includes(g))
      errors.push({
        field,
        code: 'not_allowed',
        detail: `a ${d.type} client may use: ${allowed.join(', ')}`,
      });
    seen.add(g);
  });
  // Refresh tokens are only ever issued with an authorization code or a device code here.
  if (seen.has(GRANT.refresh) && !seen.has(GRANT.code) && !seen.has(GRANT.device)) {
    errors.push({ field: 'grant_types', code: 'requires_authorization_code' });
  }
  return errors.length === before;
}

/** too_few or too_many for a list of n items, or null. */
function countError(field: string, n: number, min: number, max: number): FieldError | null {
  if (n < min) return { field, code: 'too_few', detail: `at least ${min}` };
  if (n > max) return { field, code: 'too_many', detail: `at most ${max}` };
  return null;
}

function checkUriList(
  field: string,
  list: readonly string[],
  min: number,
  max: number,
  errors: FieldError[],
  judge: (uri: string) => string | null,
): void {
  if (max === 0 && list.length > 0) {
    errors.push({
      field,
      code: 'not_allowed',
      detail: 'only clients with the authorization_code grant have these',
    });
    return;
  }
  const count = countError(field, list.length, min, max);
  if (count) {
    errors.push(count);
    return;
  }
  const seen = new Set<string>();
  list.forEach((uri, i) => {
    const code = judge(uri) ?? (seen.has(uri) ? 'duplicate' : null);
    if (code) errors.push({ field: `${field}[${i}]`, code });
    seen.add(uri);
  });
}

function checkOrigins(d: ClientDraft, errors: FieldError[], given: boolean): string[] {
  const list = d.allowedOrigins;
  // Browsers call the service with these origins; only browser-based clients have any.
  if (d.type !== 'spa' && d.type !== 'web') {
    if (list.length > 0)
      errors.push({ field: 'allowed_origins', code: 'not_allowed', detail: 'spa and web clients only' });
    return list;
  }
  const count = countError('allowed_origins', list.length, 0, MAX_ALLOWED_ORIGINS);
  if (count) {
    errors.push(count);
    return list;
  }
  if (!given) return list;
  const out: string[] = [];
  list.forEach((raw, i) => {
    const v = validateOrigin(raw);
    const field = `allowed_origins[${i}]`;
    if (!v.ok) errors.push({ field, code: v.reason });
    else if (out.includes(v.origin)) errors.push({ field, code: 'duplicate' });
    else out.push(v.origin);
  });
  return out;
}

function checkJwks(d: ClientDraft, errors: FieldError[], given: boolean): void {
  const method = d.tokenEndpointAuthMethod;
  const wantsKeys = method === 'private_key_jwt' || method === 'self_signed_tls_client_auth';
  if (!wantsKeys) {
    if (d.jwks)
      errors.push({
        field: 'jwks',
        code: 'not_allowed',
        detail: 'only for private_key_jwt and self_signed_tls_client_auth',
      });
    return;
  }
  if (!d.jwks) {
    errors.push({ field: 'jwks', code: 'required', detail: `${method} needs keys` });
    return;
  }
  const keys = d.jwks.keys;
  const count = countError('jwks.keys', keys.length, 1, MAX_JWKS_KEYS);
  if (count) errors.push(count);
  if (count || !given) return;
  checkPublicKeys(keys, errors);
  if (method === 'self_signed_tls_client_auth') checkCertificateKeys(keys, errors);
}

/** Each key of a `jwks.keys` list is a usable public signature key, and no kid repeats. */
export function checkPublicKeys(keys: Record<string, unknown>[], errors: FieldError[]): void {
  const kids = new Set<string>();
  keys.forEach((key, i) => {
    const code = publicJwkProblem(key);
    if (code) errors.push({ field: `jwks.keys[${i}]`, code });
    else if (typeof key.kid === 'string') {
      if (kids.has(key.kid)) errors.push({ field: `jwks.keys[${i}].kid`, code: 'duplicate' });
      kids.add(key.kid);
    }
  });
}

// Any of these makes a JWK a private or symmetric key, which must never be handed to us.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
// The algorithms the service verifies (spec doc 1, Authentication 7), per key type and curve.
const ALGS: Record<string, readonly string[]> = {
  RSA: ['RS256', 'PS256'],
  'EC/P-256': ['ES256'],
  'OKP/Ed25519': ['EdDSA'],
};

/** Why a JWK is not a usable public signature key of an accepted kind, or null. */
export function publicJwkProblem(key: Record<string, unknown>): string | null {
  if (PRIVATE_MEMBERS.some((m) => Object.hasOwn(key, m))) return 'private_key';
  // Stored as jsonb, which cannot hold a NUL character anywhere.
  if (containsNul(key)) return 'control_character';
  const kty = key.kty;
  const family = kty === 'RSA' ? 'RSA' : kty === 'EC' || kty === 'OKP' ? `${kty}/${String(key.crv)}` : null;
  const algs = family === null ? undefined : ALGS[family];
  if (!algs) return 'unsupported_key';
  if (key.use !== undefined && key.use !== 'sig') return 'not_signing_key';
  if (key.key_ops !== undefined) {
    const ops = key.key_ops;
    if (!Array.isArray(ops) || ops.length === 0 || ops.some((o) => o !== 'verify')) return 'not_signing_key';
  }
  if (key.alg !== undefined && !algs.includes(key.alg as string)) return 'unsupported_algorithm';
  if (key.kid !== undefined && (typeof key.kid !== 'string' || key.kid.length === 0 || key.kid.length > 128))
    return 'invalid_kid';
  try {
    const k = createPublicKey({ key: { ...key } as JsonWebKey, format: 'jwk' });
    if (kty === 'RSA' && (k.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return 'weak_key';
  } catch {
    return 'invalid_key';
  }
  return null;
}

function containsNul(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\0');
  if (Array.isArray(v)) return v.some(containsNul);
  if (typeof v === 'object' && v !== null) {
    return Object.entries(v).some(([k, x]) => k.includes('\0') || containsNul(x));
  }
  return false;
}
