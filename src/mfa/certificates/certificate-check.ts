// Checks a client certificate presented for sign-in (docs/certificate-signin.md): a valid path
// (RFC 5280 section 6, cert-path.ts) from the certificate to one of the realm's trust anchors at
// this instant, a leaf that may authenticate a TLS client (keyUsage digitalSignature and extended
// key usage clientAuth when those extensions are present, RFC 5280 4.2.1.3 and 4.2.1.12), and the
// one value of the anchor's mapping field that names the account. Parsing is @peculiar/x509's.
import 'reflect-metadata';
import {
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  X509Certificate,
} from '@peculiar/x509';
import { anchorOfPath, type PathProblem } from '../webauthn/cert-path.ts';
import type { MappingIdentifier, MappingSource, TrustAnchorRow } from './trust-anchors.repo.ts';

/** Why a presented certificate signs no one in; also the reason its audit record gives. */
export type CertificateRefusal = PathProblem | 'not_for_client_auth' | 'no_identity' | 'ambiguous_identity';

export type CertificateVerdict =
  | {
      ok: true;
      anchor: TrustAnchorRow;
      /** The account's sign-in identifier the certificate names. */
      identifier: { type: MappingIdentifier; value: string };
    }
  | { ok: false; refusal: CertificateRefusal };

const EMAIL_ADDRESS = '1.2.840.113549.1.9.1';
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';

/** keyUsage and extKeyUsage, when present, allow TLS client authentication. */
function usableForClientAuth(c: X509Certificate): boolean {
  const usage = c.getExtension(KeyUsagesExtension);
  if (usage && (usage.usages & KeyUsageFlags.digitalSignature) === 0) return false;
  const extended = c.getExtension(ExtendedKeyUsageExtension);
  if (!extended) return true;
  return extended.usages.some((u) => u === ExtendedKeyUsage.clientAuth || u === ANY_EXTENDED_KEY_USAGE);
}

/** Every value of the mapping field; an unreadable subjectAltName reads as no value. */
function valuesOf(c: X509Certificate, source: MappingSource): string[] {
  switch (source) {
    case 'subject_cn':
      return c.subjectName.getField('CN');
    case 'subject_email':
      return c.subjectName.getField(EMAIL_ADDRESS);
    case 'san_email':
    case 'san_upn': {
      const type = source === 'san_email' ? 'email' : 'upn';
      try {
        const san = c.getExtension(SubjectAlternativeNameExtension);
        return (san?.names.items ?? []).filter((n) => n.type === type).map((n) => n.value);
      } catch {
        return [];
      }
    }
  }
}

/** The one value of the field (case-insensitively), or why there is none. */
export function identityOf(
  c: X509Certificate,
  source: MappingSource,
): { ok: true; value: string } | { ok: false; refusal: 'no_identity' | 'ambiguous_identity' } {
  const values = valuesOf(c, source)
    .map((v) => v.trim())
    .filter((v) => v !== '');
  const distinct = new Set(values.map((v) => v.toLowerCase()));
  if (distinct.size === 0) return { ok: false, refusal: 'no_identity' };
  if (distinct.size > 1) return { ok: false, refusal: 'ambiguous_identity' };
  return { ok: true, value: values[0] as string };
}

/**
 * The anchor a DER client certificate chains to and the identifier it names, at `now`. Only the
 * certificate itself is used: the path runs from it to an anchor through other anchors, never
 * through certificates the client sent along.
 */
export async function checkCertificate(
  der: Uint8Array,
  anchors: readonly TrustAnchorRow[],
  now: Date,
): Promise<CertificateVerdict> {
  const path = await anchorOfPath({
    leaf: der,
    intermediates: [],
    anchors: anchors.map((a) => a.certificate),
    now,
    leafMustNotBeCa: true,
  });
  if (!path.ok) return { ok: false, refusal: path.problem };
  const anchor = anchors[path.anchor] as TrustAnchorRow;
  const leaf = new X509Certificate(der);
  if (!usableForClientAuth(leaf)) return { ok: false, refusal: 'not_for_client_auth' };
  const identity = identityOf(leaf, anchor.mapping_source);
  if (!identity.ok) return identity;
  return { ok: true, anchor, identifier: { type: anchor.mapping_identifier, value: identity.value } };
}
