// Which client credentials a token, introspection or revocation request presents (RFC 6749
// section 2.3, RFC 7523 section 2.2). Pure: it reads the Authorization header and the form and
// says which one method was used; client-auth.ts checks the credentials against the client.
import type { X509Certificate } from 'node:crypto';
import { basicChallenge, oauthError } from '../kernel/oauth-error.ts';

export type ClientAuthMethod =
  | 'client_secret_basic'
  | 'client_secret_post'
  | 'private_key_jwt'
  | 'tls_client_auth'
  | 'self_signed_tls_client_auth'
  | 'none';

export type PresentedCredentials =
  | { method: 'client_secret_basic'; clientId: string; secret: string }
  | { method: 'client_secret_post'; clientId: string; secret: string }
  | { method: 'private_key_jwt'; clientId: string | null; assertion: string }
  | { method: 'none'; clientId: string };

/** The parsed form body; URLSearchParams fits, and repeated parameters stay visible. */
export interface FormFields {
  getAll(name: string): string[];
}

export interface ClientAuthInput {
  authorization: string | undefined;
  form: FormFields;
  /** The request's client certificate (mutual TLS, RFC 8705); absent or null: none. */
  certificate?: X509Certificate | null;
}

export interface ReadLimits {
  /** limits.max_token_bytes: bounds the Basic header value, a form secret and an assertion. */
  maxTokenBytes: number;
  /** The realm named in the Basic challenge. */
  challengeRealm: string;
}

export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

// RFC 6749 appendix A: client ids and secrets are visible ASCII and space. This also keeps NUL
// and other control characters away from SQL.
const VSCHAR = /^[\x20-\x7e]+$/;
const BASIC = /^basic +(\S*) *$/i;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A parameter sent at most once; an empty value counts as absent (RFC 6749 section 3.2). */
export function singleParam(form: FormFields, name: string): string | null {
  const values = form.getAll(name);
  if (values.length > 1) throw oauthError.invalidRequest(`parameter ${name} is repeated`);
  const value = values[0];
  return value === undefined || value === '' ? null : value;
}

// application/x-www-form-urlencoded decoding, which RFC 6749 section 2.3.1 applies to both parts.
function formDecode(s: string): string | null {
  try {
    return decodeURIComponent(s.replace(/\+/g, '%20'));
  } catch {
    return null;
  }
}

/** Client id and secret of a Basic header value; any flaw is invalid_client with a challenge. */
export function parseBasicCredentials(
  header: string,
  limits: ReadLimits,
): { clientId: string; secret: string } {
  const fail = (debug: string) =>
    oauthError.invalidClient({ challenge: basicChallenge(limits.challengeRealm), debug });
  if (Buffer.byteLength(header, 'utf8') > limits.maxTokenBytes) throw fail('basic_oversized');
  const encoded = BASIC.exec(header)?.[1];
  if (encoded === undefined) throw fail('unsupported_scheme');
  if (!BASE64.test(encoded)) throw fail('basic_not_base64');
  const bytes = Buffer.from(encoded, 'base64');
  // Node's decoder skips what it cannot read; insist the text was exactly this byte string.
  if (bytes.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) {
    throw fail('basic_not_base64');
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw fail('basic_not_utf8');
  }
  const colon = text.indexOf(':');
  if (colon < 0) throw fail('basic_without_colon');
  const clientId = formDecode(text.slice(0, colon));
  const secret = formDecode(text.slice(colon + 1));
  if (clientId === null || secret === null) throw fail('basic_bad_percent_encoding');
  if (!VSCHAR.test(clientId) || !VSCHAR.test(secret)) throw fail('basic_empty_or_invalid_characters');
  return { clientId, secret };
}

/**
 * Exactly one method per request: a second credential is invalid_request. A client_id in the
 * form next to Basic is tolerated only when it names the same client.
 */
export function readPresentedCredentials(input: ClientAuthInput, limits: ReadLimits): PresentedCredentials {
  const clientId = singleParam(input.form, 'client_id');
  const secret = singleParam(input.form, 'client_secret');
  const assertion = singleParam(input.form, 'client_assertion');
  const assertionType = singleParam(input.form, 'client_assertion_type');
  const fail = (debug: string) => oauthError.invalidClient({ debug });
  const tooLong = (s: string) => Buffer.byteLength(s, 'utf8') > limits.maxTokenBytes;
  if (clientId !== null && (tooLong(clientId) || !VSCHAR.test(clientId))) throw fail('client_id_invalid');

  if (input.authorization) {
    if (secret !== null || assertion !== null || assertionType !== null) {
      throw oauthError.invalidRequest('more than one client authentication method was used');
    }
    const basic = parseBasicCredentials(input.authorization, limits);
    if (clientId !== null && clientId !== basic.clientId) {
      throw oauthError.invalidRequest('client_id differs from the client in the Authorization header');
    }
    return { method: 'client_secret_basic', ...basic };
  }
  if (assertion !== null || assertionType !== null) {
    if (secret !== null)
      throw oauthError.invalidRequest('more than one client authentication method was used');
    if (assertion === null || assertionType === null) {
      throw oauthError.invalidRequest('client_assertion and client_assertion_type go together');
    }
    if (assertionType !== JWT_BEARER_ASSERTION) throw fail('unsupported_assertion_type');
    if (tooLong(assertion)) throw fail('assertion_oversized');
    return { method: 'private_key_jwt', clientId, assertion };
  }
  if (secret !== null) {
    if (clientId === null) throw oauthError.invalidRequest('client_secret needs client_id');
    if (tooLong(secret) || !VSCHAR.test(secret)) throw fail('secret_invalid');
    return { method: 'client_secret_post', clientId, secret };
  }
  if (clientId !== null) return { method: 'none', clientId };
  throw oauthError.invalidClient({
    challenge: basicChallenge(limits.challengeRealm),
    debug: 'no_client_authentication',
  });
}
