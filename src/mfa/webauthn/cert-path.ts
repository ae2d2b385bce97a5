// Certificate path validation for attestation chains and the FIDO metadata BLOB's signer. The
// path is built by @peculiar/x509's chain builder (issuer name, key identifiers, signature); the
// RFC 5280 section 6.1 checks a closed, offline path needs are made here on top of it, each
// explicitly: validity at the given time of every certificate (anchor included), every issuer a
// CA (basicConstraints cA) allowed to sign certificates (keyUsage keyCertSign), every
// pathLenConstraint, no critical extension we do not process, and the path ending at one of the
// configured anchors. Nothing here fetches anything (no CRL or AIA lookups: docs/passkeys.md).
import 'reflect-metadata';
import {
  BasicConstraintsExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  X509Certificate,
  X509ChainBuilder,
} from '@peculiar/x509';

/** Why a path was refused; also what the registration refusal reports. */
export type PathProblem =
  | 'unparsable'
  | 'no_path'
  | 'path_too_long'
  | 'outside_validity'
  | 'leaf_is_ca'
  | 'issuer_not_ca'
  | 'issuer_cannot_sign_certificates'
  | 'path_length_exceeded'
  | 'unknown_critical_extension'
  | 'duplicate_extension';

export type PathVerdict = { ok: true } | { ok: false; problem: PathProblem };

export interface PathInput {
  /** The end-entity certificate (attestation certificate or BLOB signer). */
  leaf: string | Uint8Array;
  /** Certificates the presenter sent along, in any order; unused ones are ignored. */
  intermediates: readonly (string | Uint8Array)[];
  /** The configured roots; the path must end at one of them. */
  anchors: readonly (string | Uint8Array)[];
  now: Date;
  /** FIDO attestation certificates must not be CAs (WebAuthn L3 8.2.1, basic constraints). */
  leafMustNotBeCa: boolean;
}

/** Leaf, intermediates and anchor together: real attestation chains have two or three. */
const MAX_PATH = 6;

const OID = {
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
} as const;

// Critical extensions this path check processes or that carry no path constraint (names and
// identifiers). Any other critical extension refuses the certificate (RFC 5280 4.2).
const UNDERSTOOD = new Set<string>(Object.values(OID));

/** PEM text or DER bytes as a certificate, or null when it does not parse. */
export function parseX509(input: string | Uint8Array): X509Certificate | null {
  try {
    return new X509Certificate(typeof input === 'string' ? input : Uint8Array.from(input));
  } catch {
    return null;
  }
}

const PEM = /^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\r?\n?$/;

/**
 * A configured root or anchor: exactly one PEM certificate, a CA allowed to sign certificates, valid
 * at `now`; otherwise the field problem's code and detail.
 */
export function caCertificate(
  pem: string,
  now: Date,
): { ok: true; cert: X509Certificate } | { ok: false; code: string; detail: string } {
  const cert = PEM.test(`${pem.trim()}\n`) ? parseX509(pem) : null;
  if (!cert) return { ok: false, code: 'pattern', detail: 'one PEM certificate' };
  if (issuerProblem(cert))
    return {
      ok: false,
      code: 'not_ca',
      detail: 'not a CA certificate allowed to sign certificates (basicConstraints cA, keyUsage keyCertSign)',
    };
  if (!withinValidity(cert, now))
    return { ok: false, code: 'expired', detail: 'outside its validity period' };
  return { ok: true, cert };
}

export const withinValidity = (c: X509Certificate, now: Date): boolean =>
  c.notBefore.getTime() <= now.getTime() && now.getTime() <= c.notAfter.getTime();

const basicConstraints = (c: X509Certificate) => c.getExtension(BasicConstraintsExtension);

const isCa = (c: X509Certificate): boolean => basicConstraints(c)?.ca === true;

/**
 * Why `c` may not issue certificates, or null when it may: basicConstraints cA true and a keyUsage
 * naming keyCertSign. A CA certificate without keyUsage is refused too: RFC 5280 4.2.1.3 makes the
 * extension mandatory for keys that sign certificates.
 */
export function issuerProblem(c: X509Certificate): PathProblem | null {
  if (!isCa(c)) return 'issuer_not_ca';
  const usage = c.getExtension(KeyUsagesExtension);
  if (!usage || (usage.usages & KeyUsageFlags.keyCertSign) === 0) return 'issuer_cannot_sign_certificates';
  return null;
}

function extensionProblem(c: X509Certificate): PathProblem | null {
  const seen = new Set<string>();
  for (const e of c.extensions) {
    if (seen.has(e.type)) return 'duplicate_extension';
    seen.add(e.type);
    if (e.critical && !UNDERSTOOD.has(e.type)) return 'unknown_critical_extension';
  }
  return null;
}

const selfIssued = (c: X509Certificate) => c.subject === c.issuer;

const sameCert = (a: X509Certificate, b: X509Certificate) =>
  Buffer.from(a.rawData).equals(Buffer.from(b.rawData));

/** The built chain cut at the first anchor after the leaf, or null when it reaches none. */
async function pathToAnchor(
  leaf: X509Certificate,
  intermediates: X509Certificate[],
  anchors: X509Certificate[],
): Promise<{ path: X509Certificate[]; anchor: number } | null> {
  // Anchors first: where an anchor and a presented certificate share a name and key, the anchor
  // is the one the path must use.
  const builder = new X509ChainBuilder({ certificates: [...anchors, ...intermediates] });
  let chain: X509Certificate[];
  try {
    chain = [...(await builder.build(leaf))];
  } catch {
    return null; // a loop among the presented certificates
  }
  for (let end = 1; end < chain.length; end++) {
    const anchor = anchors.findIndex((a) => sameCert(a, chain[end] as X509Certificate));
    if (anchor >= 0) return { path: chain.slice(0, end + 1), anchor };
  }
  return null;
}

/** Checks of a built path, leaf first and anchor last (RFC 5280 6.1.3 and 6.1.4). */
function pathProblem(path: X509Certificate[], now: Date, leafMustNotBeCa: boolean): PathProblem | null {
  if (path.length > MAX_PATH) return 'path_too_long';
  for (const c of path) {
    const bad = extensionProblem(c);
    if (bad) return bad;
    if (!withinValidity(c, now)) return 'outside_validity';
  }
  const [leaf] = path;
  if (leafMustNotBeCa && leaf && isCa(leaf)) return 'leaf_is_ca';
  for (let i = 1; i < path.length; i++) {
    const issuer = path[i] as X509Certificate;
    const bad = issuerProblem(issuer);
    if (bad) return bad;
    const limit = basicConstraints(issuer)?.pathLength;
    // Intermediate CAs between this issuer and the leaf; self-issued ones do not count (6.1.4 l).
    const below = path.slice(1, i).filter((c) => !selfIssued(c)).length;
    if (limit !== undefined && below > limit) return 'path_length_exceeded';
  }
  return null;
}

/**
 * Whether `leaf`, helped by `intermediates`, has a valid path to one of `anchors` at `now`, and
 * which anchor (its index in `anchors`) the path ends at.
 */
export async function anchorOfPath(
  input: PathInput,
): Promise<{ ok: true; anchor: number } | { ok: false; problem: PathProblem }> {
  const leaf = parseX509(input.leaf);
  const intermediates = input.intermediates.map(parseX509);
  const anchors = input.anchors.map(parseX509);
  if (!leaf || intermediates.some((c) => c === null)) return { ok: false, problem: 'unparsable' };
  if (input.intermediates.length >= MAX_PATH) return { ok: false, problem: 'path_too_long' };
  // Unparsable anchors stay in the list (never matched) so the index names the caller's anchor.
  const usable = anchors.filter((a): a is X509Certificate => a !== null);
  const found = await pathToAnchor(leaf, intermediates as X509Certificate[], usable);
  if (!found) return { ok: false, problem: 'no_path' };
  const problem = pathProblem(found.path, input.now, input.leafMustNotBeCa);
  if (problem) return { ok: false, problem };
  return { ok: true, anchor: anchors.indexOf(usable[found.anchor] as X509Certificate) };
}

/** Whether `leaf`, helped by `intermediates`, has a valid path to one of `anchors` at `now`. */
export async function validatePath(input: PathInput): Promise<PathVerdict> {
  const verdict = await anchorOfPath(input);
  return verdict.ok ? { ok: true } : verdict;
}
