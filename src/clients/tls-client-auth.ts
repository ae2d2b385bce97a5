// tls_client_auth (RFC 8705 section 2.1, docs/oauth-mtls.md): a client proves itself with a
// certificate a CA issued, matched by the one subject DN or subject alternative name it
// registered. RFC 8705 leaves the trusted CAs to the server; here each client registers its own
// (1..10 CA certificates, decision in docs/decisions.md), and the presented certificate must be
// issued directly by one of them and be within its validity, as must that CA certificate.
// Certificates are read by node:crypto and @peculiar/x509, never parsed here.
import 'reflect-metadata';
import { X509Certificate as NodeCertificate } from 'node:crypto';
import { SubjectAlternativeNameExtension, X509Certificate } from '@peculiar/x509';
import ipaddr from 'ipaddr.js';
import { parseDistinguishedName, rdnsOfName, sameName } from './distinguished-name.ts';

/** The subject members a client registers exactly one of (RFC 8705 section 2.1.2). */
export const TLS_SUBJECT_MEMBERS = [
  'tls_client_auth_subject_dn',
  'tls_client_auth_san_dns',
  'tls_client_auth_san_uri',
  'tls_client_auth_san_ip',
  'tls_client_auth_san_email',
] as const;
export type TlsSubjectMember = (typeof TLS_SUBJECT_MEMBERS)[number];

/** The clients.tls_client_auth column (migration 0058). */
export interface StoredTlsClientAuth {
  subject: { member: TlsSubjectMember; value: string };
  /** The CA certificates that may issue the client's certificate, PEM. */
  trust_anchors: string[];
}

const readNode = (pem: string): NodeCertificate | null => {
  try {
    return new NodeCertificate(pem);
  } catch {
    return null;
  }
};

const within = (c: NodeCertificate, now: Date): boolean =>
  Date.parse(c.validFrom) <= now.getTime() && now.getTime() <= Date.parse(c.validTo);

/** Whether one of the anchors, a CA valid now, issued and signed `cert`, itself valid now. */
export function issuedByAnchor(cert: NodeCertificate, anchors: readonly string[], now: Date): boolean {
  if (!within(cert, now)) return false;
  return anchors.some((pem) => {
    const anchor = readNode(pem);
    return (
      anchor?.ca === true && within(anchor, now) && cert.checkIssued(anchor) && cert.verify(anchor.publicKey)
    );
  });
}

/** The subject alternative names of one type (`dns`, `url`, `ip`, `email`) the certificate carries. */
function sanValues(cert: X509Certificate, type: string): string[] {
  const ext = cert.getExtension(SubjectAlternativeNameExtension);
  return (ext?.names.items ?? []).filter((n) => n.type === type).map((n) => n.value);
}

function sameIp(a: string, b: string): boolean {
  try {
    const x = ipaddr.process(a);
    const y = ipaddr.process(b);
    return x.kind() === y.kind() && x.toNormalizedString() === y.toNormalizedString();
  } catch {
    return false;
  }
}

/** Mailbox equality: the local part exactly, the domain in any case (RFC 5280 section 7.5). */
function sameEmail(a: string, b: string): boolean {
  const at = a.lastIndexOf('@');
  const bt = b.lastIndexOf('@');
  return (
    at > 0 &&
    bt > 0 &&
    a.slice(0, at) === b.slice(0, bt) &&
    a.slice(at + 1).toLowerCase() === b.slice(bt + 1).toLowerCase()
  );
}

/** Whether the certificate carries the registered subject value. */
export function subjectMatches(cert: NodeCertificate, subject: StoredTlsClientAuth['subject']): boolean {
  const parsed = new X509Certificate(cert.raw);
  const { member, value } = subject;
  switch (member) {
    case 'tls_client_auth_subject_dn': {
      const registered = parseDistinguishedName(value);
      return registered !== null && sameName(registered, rdnsOfName(parsed.subjectName));
    }
    case 'tls_client_auth_san_dns':
      // Names compare in any case; a wildcard in the certificate is only the literal text.
      return sanValues(parsed, 'dns').some((v) => v.toLowerCase() === value.toLowerCase());
    case 'tls_client_auth_san_uri':
      return sanValues(parsed, 'url').includes(value);
    case 'tls_client_auth_san_ip':
      return sanValues(parsed, 'ip').some((v) => sameIp(v, value));
    case 'tls_client_auth_san_email':
      return sanValues(parsed, 'email').some((v) => sameEmail(v, value));
  }
}

/** Whether the presented certificate proves a tls_client_auth client. */
export function tlsClientAuthProves(
  settings: StoredTlsClientAuth | null,
  cert: NodeCertificate,
  now: Date,
): boolean {
  if (!settings) return false;
  return issuedByAnchor(cert, settings.trust_anchors, now) && subjectMatches(cert, settings.subject);
}
