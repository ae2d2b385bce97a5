// Registration rules for tls_client_auth (RFC 8705 section 2.1.2, docs/oauth-mtls.md): exactly one
// subject member with a well-formed value, and 1..10 CA certificates (PEM) that are CAs and
// unexpired. Other methods register none of these members. Pure: returns field errors.
import { X509Certificate } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { FieldError } from '../platform/http/problem.ts';
import { parseDistinguishedName } from './distinguished-name.ts';
import { type StoredTlsClientAuth, TLS_SUBJECT_MEMBERS, type TlsSubjectMember } from './tls-client-auth.ts';

export const MAX_TRUST_ANCHORS = 10;
export const MAX_SUBJECT_CHARS = 1024;
const TRUST_ANCHORS = 'tls_client_auth_trust_anchors';

/** The tls_client_auth members a request gave (wire names). */
export type TlsClientAuthInput = Partial<Record<TlsSubjectMember, string>> & {
  tls_client_auth_trust_anchors?: string[];
};

const HOSTNAME =
  /^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

function valueProblem(member: TlsSubjectMember, v: string): string | null {
  if (v.length === 0 || v.length > MAX_SUBJECT_CHARS) return 'length';
  if (/\p{Cc}/u.test(v)) return 'control_character';
  switch (member) {
    case 'tls_client_auth_subject_dn':
      return parseDistinguishedName(v) ? null : 'invalid_dn';
    case 'tls_client_auth_san_dns':
      return HOSTNAME.test(v) ? null : 'invalid_hostname';
    case 'tls_client_auth_san_uri':
      return URL.canParse(v) && /^[A-Za-z][A-Za-z0-9+.-]*:/.test(v) ? null : 'invalid_uri';
    case 'tls_client_auth_san_ip':
      return ipaddr.isValid(v) ? null : 'invalid_ip';
    case 'tls_client_auth_san_email':
      return /^[^@\s]+@[^@\s]+$/.test(v) ? null : 'invalid_email';
  }
}

function anchorsOf(list: unknown, now: Date | null, errors: FieldError[]): void {
  if (!Array.isArray(list) || list.length === 0) {
    errors.push({
      field: TRUST_ANCHORS,
      code: 'required',
      detail: 'tls_client_auth needs 1..10 CA certificates',
    });
    return;
  }
  if (list.length > MAX_TRUST_ANCHORS) {
    errors.push({ field: TRUST_ANCHORS, code: 'too_many', detail: `at most ${MAX_TRUST_ANCHORS}` });
    return;
  }
  list.forEach((pem, i) => {
    const field = `${TRUST_ANCHORS}[${i}]`;
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(String(pem));
    } catch {
      errors.push({ field, code: 'invalid_certificate', detail: 'a PEM certificate' });
      return;
    }
    if (!cert.ca) errors.push({ field, code: 'not_ca', detail: 'a CA certificate (basicConstraints cA)' });
    else if (now !== null && Date.parse(cert.validTo) <= now.getTime())
      errors.push({ field, code: 'expired' });
  });
}

/**
 * The stored settings of a tls_client_auth client, or null with errors pushed. For any other
 * method every member must be absent.
 */
export function checkTlsClientAuth(
  method: string,
  input: TlsClientAuthInput,
  /** null: expiry is not judged (a stored draft re-read). */
  now: Date | null,
  errors: FieldError[],
): StoredTlsClientAuth | null {
  const given = TLS_SUBJECT_MEMBERS.filter((m) => input[m] !== undefined);
  if (method !== 'tls_client_auth') {
    for (const m of [...given, ...(input.tls_client_auth_trust_anchors ? [TRUST_ANCHORS] : [])])
      errors.push({ field: m, code: 'not_allowed', detail: 'only for tls_client_auth' });
    return null;
  }
  const before = errors.length;
  if (given.length !== 1)
    errors.push({
      field: 'tls_client_auth_subject_dn',
      code: given.length === 0 ? 'required' : 'conflict',
      detail: `exactly one of ${TLS_SUBJECT_MEMBERS.join(', ')}`,
    });
  const member = given[0];
  const value = member === undefined ? undefined : input[member];
  if (given.length === 1 && member !== undefined && value !== undefined) {
    const problem = valueProblem(member, value);
    if (problem) errors.push({ field: member, code: problem });
  }
  anchorsOf(input.tls_client_auth_trust_anchors, now, errors);
  return errors.length > before ? null : tlsSettingsOf(method, input);
}

/** The wire members of stored settings (what the administration API shows). */
export function presentTlsClientAuth(s: StoredTlsClientAuth | null): TlsClientAuthInput {
  if (!s) return {};
  return { [s.subject.member]: s.subject.value, tls_client_auth_trust_anchors: s.trust_anchors };
}

/** The settings to store for members checkTlsClientAuth accepted; null for other methods. */
export function tlsSettingsOf(
  method: string,
  input: TlsClientAuthInput | undefined,
): StoredTlsClientAuth | null {
  if (method !== 'tls_client_auth' || !input) return null;
  const member = TLS_SUBJECT_MEMBERS.find((m) => input[m] !== undefined);
  const value = member === undefined ? undefined : input[member];
  if (member === undefined || value === undefined) return null;
  return { subject: { member, value }, trust_anchors: [...(input.tls_client_auth_trust_anchors ?? [])] };
}

/** The decoded (camelCase) tls_client_auth members of a request body. */
export interface DecodedTlsMembers {
  tlsClientAuthSubjectDn?: string | undefined;
  tlsClientAuthSanDns?: string | undefined;
  tlsClientAuthSanUri?: string | undefined;
  tlsClientAuthSanIp?: string | undefined;
  tlsClientAuthSanEmail?: string | undefined;
  tlsClientAuthTrustAnchors?: string[] | undefined;
}

/** The members a decoded body gave, by wire name; undefined when it gave none. */
export function tlsInputOf(d: DecodedTlsMembers): TlsClientAuthInput | undefined {
  const out: TlsClientAuthInput = {};
  if (d.tlsClientAuthSubjectDn !== undefined) out.tls_client_auth_subject_dn = d.tlsClientAuthSubjectDn;
  if (d.tlsClientAuthSanDns !== undefined) out.tls_client_auth_san_dns = d.tlsClientAuthSanDns;
  if (d.tlsClientAuthSanUri !== undefined) out.tls_client_auth_san_uri = d.tlsClientAuthSanUri;
  if (d.tlsClientAuthSanIp !== undefined) out.tls_client_auth_san_ip = d.tlsClientAuthSanIp;
  if (d.tlsClientAuthSanEmail !== undefined) out.tls_client_auth_san_email = d.tlsClientAuthSanEmail;
  if (d.tlsClientAuthTrustAnchors !== undefined)
    out.tls_client_auth_trust_anchors = d.tlsClientAuthTrustAnchors;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * A change's members over the stored ones: a subject member given replaces the stored subject,
 * given CA certificates replace the stored ones.
 */
export function mergeTlsInput(
  stored: StoredTlsClientAuth | null,
  given: TlsClientAuthInput,
): TlsClientAuthInput {
  const givesSubject = TLS_SUBJECT_MEMBERS.some((m) => given[m] !== undefined);
  const base = presentTlsClientAuth(stored);
  const merged: TlsClientAuthInput = givesSubject
    ? { tls_client_auth_trust_anchors: base.tls_client_auth_trust_anchors ?? [] }
    : { ...base };
  return { ...merged, ...given };
}
