// Whether a registration's attestation is trusted (spec doc 1, Passkey policy 1): only a
// certificate chain counts (none and self attestation never do), the model needs trusted
// metadata under a non-zero AAGUID (a realm entry wins over the operator's metadata), the chain
// must verify to one of that entry's roots, and a metadata entry must not report the model
// compromised or revoked.
import type { X509Certificate } from 'node:crypto';
import { chainsTo, parseCertificate } from './cert-chain.ts';
import { compromised, type FidoEntry } from './fido-metadata.ts';
import { ZERO_AAGUID } from './webauthn-policy.ts';

export type AttestationSource = 'realm' | 'fido_metadata';

export interface TrustVerdict {
  trusted: boolean;
  /** Where the model's trusted metadata came from; null when there was none. */
  source: AttestationSource | null;
}

export interface TrustInput {
  aaguid: string;
  /** The attestation statement's x5c, leaf first; empty for none and self attestation. */
  x5c: readonly Uint8Array[];
  /** The realm's root certificates for this AAGUID, when it lists the model. */
  realmRoots: readonly string[] | null;
  operatorEntry: FidoEntry | null;
  now: Date;
}

const parsed = (pems: readonly string[]): X509Certificate[] =>
  pems.map((p) => parseCertificate(p)).filter((c): c is X509Certificate => c !== null);

export function evaluateAttestationTrust(i: TrustInput): TrustVerdict {
  const source: AttestationSource | null =
    i.realmRoots !== null ? 'realm' : i.operatorEntry !== null ? 'fido_metadata' : null;
  if (source === null || i.aaguid === ZERO_AAGUID) return { trusted: false, source: null };
  const untrusted = { trusted: false, source };
  if (i.x5c.length === 0) return untrusted;
  if (source === 'fido_metadata' && i.operatorEntry && compromised(i.operatorEntry)) return untrusted;
  const certs = i.x5c.map((c) => parseCertificate(c));
  const [leaf, ...rest] = certs;
  if (!leaf || certs.some((c) => c === null)) return untrusted;
  const anchors = parsed(source === 'realm' ? (i.realmRoots ?? []) : (i.operatorEntry?.roots ?? []));
  const intermediates = rest.filter((c): c is X509Certificate => c !== null);
  return chainsTo(leaf, intermediates, anchors, i.now) ? { trusted: true, source } : untrusted;
}
