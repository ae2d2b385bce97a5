// One FIDO MDS3 metadata BLOB: its JWS verified against the operator's root with the same path
// check attestation chains get (cert-path.ts; never the ceremony library's metadata service,
// STACK G12), its entries kept by AAGUID, and its nextUpdate date read so a BLOB nobody replaced
// can be noticed (fido-metadata.ts).
import { compactVerify, decodeProtectedHeader, importX509 } from 'jose';
import { parseX509, validatePath } from './cert-path.ts';

export interface FidoEntry {
  aaguid: string;
  /** PEM certificates the model's attestation chains to (attestationRootCertificates). */
  roots: string[];
  /** Status report values, oldest first. */
  statuses: string[];
}

export interface FidoBlob {
  entries: Map<string, FidoEntry>;
  /** Start (00:00 UTC) of the day by which the publisher promised the next BLOB. */
  nextUpdate: Date;
}

/** Status reports that end trust in a model (FIDO MDS3 AuthenticatorStatus). */
const UNTRUSTED_STATUSES = new Set([
  'REVOKED',
  'ATTESTATION_KEY_COMPROMISE',
  'USER_KEY_REMOTE_COMPROMISE',
  'USER_KEY_PHYSICAL_COMPROMISE',
  'USER_VERIFICATION_BYPASS',
]);

export const compromised = (e: FidoEntry): boolean => e.statuses.some((s) => UNTRUSTED_STATUSES.has(s));

const pemOf = (b64: string) =>
  `-----BEGIN CERTIFICATE-----\n${b64.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----\n`;

/** MDS3 writes nextUpdate as an ISO 8601 date (YYYY-MM-DD); anything else is refused. */
export function parseNextUpdate(value: unknown): Date {
  const m = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null;
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!date || date.toISOString().slice(0, 10) !== value)
    throw new Error('the BLOB carries no valid nextUpdate date');
  return date;
}

function entriesOf(body: { entries?: unknown }): Map<string, FidoEntry> {
  const entries = new Map<string, FidoEntry>();
  for (const raw of Array.isArray(body.entries) ? body.entries : []) {
    const e = raw as {
      aaguid?: unknown;
      metadataStatement?: { attestationRootCertificates?: unknown };
      statusReports?: { status?: unknown }[];
    };
    if (typeof e.aaguid !== 'string') continue;
    const roots = e.metadataStatement?.attestationRootCertificates;
    entries.set(e.aaguid.toLowerCase(), {
      aaguid: e.aaguid.toLowerCase(),
      roots: Array.isArray(roots) ? roots.filter((r) => typeof r === 'string').map(pemOf) : [],
      statuses: (e.statusReports ?? []).flatMap((s) => (typeof s.status === 'string' ? [s.status] : [])),
    });
  }
  return entries;
}

/** Verifies a BLOB against the root at `now` and returns what it says; throws on any failure. */
export async function verifyMetadataBlob(blob: string, rootPem: string, now: Date): Promise<FidoBlob> {
  if (!parseX509(rootPem)) throw new Error('the metadata root is not a certificate');
  const header = decodeProtectedHeader(blob.trim());
  const x5c = (Array.isArray(header.x5c) ? header.x5c : []).map((c) => Buffer.from(c, 'base64'));
  const [leaf, ...intermediates] = x5c;
  if (!leaf) throw new Error('the BLOB carries no x5c chain');
  const path = await validatePath({ leaf, intermediates, anchors: [rootPem], now, leafMustNotBeCa: false });
  if (!path.ok) throw new Error(`the BLOB's certificate path is not valid (${path.problem})`);
  const signer = parseX509(leaf);
  const alg = typeof header.alg === 'string' ? header.alg : '';
  const key = await importX509(signer?.toString('pem') ?? '', alg);
  const { payload } = await compactVerify(blob.trim(), key, {
    algorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'],
  });
  const body = JSON.parse(new TextDecoder().decode(payload)) as { entries?: unknown; nextUpdate?: unknown };
  return { entries: entriesOf(body), nextUpdate: parseNextUpdate(body.nextUpdate) };
}
