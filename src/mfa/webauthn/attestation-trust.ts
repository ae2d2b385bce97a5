// Whether a registration's attestation is trusted (spec doc 1, Passkey policy 1): only a
// certificate chain counts (none and self attestation never do), the model needs trusted
// metadata under a non-zero AAGUID (a realm entry wins over the operator's metadata), the chain
// must have a valid path (cert-path.ts) to one of that entry's roots, and a metadata entry must
// not report the model compromised or revoked.
import { type PathProblem, validatePath } from './cert-path.ts';
import { compromised, type FidoEntry } from './fido-blob.ts';
import { ZERO_AAGUID } from './webauthn-policy.ts';

export type AttestationSource = 'realm' | 'fido_metadata';

export interface TrustVerdict {
  trusted: boolean;
  /** Where the model's trusted metadata came from; null when there was none. */
  source: AttestationSource | null;
  /** Why a chain was refused, when the path check is what refused it. */
  problem?: PathProblem;
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

export async function evaluateAttestationTrust(i: TrustInput): Promise<TrustVerdict> {
  const source: AttestationSource | null =
    i.realmRoots !== null ? 'realm' : i.operatorEntry !== null ? 'fido_metadata' : null;
  if (source === null || i.aaguid === ZERO_AAGUID) return { trusted: false, source: null };
  const untrusted = { trusted: false, source };
  const [leaf, ...intermediates] = i.x5c;
  if (!leaf) return untrusted;
  if (source === 'fido_metadata' && i.operatorEntry && compromised(i.operatorEntry)) return untrusted;
  const verdict = await validatePath({
    leaf,
    intermediates,
    anchors: source === 'realm' ? (i.realmRoots ?? []) : (i.operatorEntry?.roots ?? []),
    now: i.now,
    leafMustNotBeCa: true,
  });
  return verdict.ok ? { trusted: true, source } : { ...untrusted, problem: verdict.problem };
}
