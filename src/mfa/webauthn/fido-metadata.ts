// The operator's FIDO metadata (spec doc 1, Passkey policy 1; settings webauthn.metadata_blob and
// webauthn.metadata_root): an MDS3 BLOB read from a file, its JWS checked against the configured
// root certificate with our own path check (never the ceremony library's metadata service),
// and its entries kept by AAGUID. The file is read again when it changes, so an operator replaces
// it without a restart; a replacement that fails verification is logged and the last good one kept.
import { readFile, stat } from 'node:fs/promises';
import { compactVerify, decodeProtectedHeader, importX509 } from 'jose';
import { chainsTo, parseCertificate } from './cert-chain.ts';

export interface FidoEntry {
  aaguid: string;
  /** PEM certificates the model's attestation chains to (attestationRootCertificates). */
  roots: string[];
  /** Status report values, oldest first. */
  statuses: string[];
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

/** Verifies a BLOB against the root and returns its entries by AAGUID; throws on any failure. */
export async function verifyMetadataBlob(
  blob: string,
  rootPem: string,
  now: Date,
): Promise<Map<string, FidoEntry>> {
  const root = parseCertificate(rootPem);
  if (!root) throw new Error('the metadata root is not a certificate');
  const header = decodeProtectedHeader(blob.trim());
  const x5c = Array.isArray(header.x5c) ? header.x5c : [];
  const certs = x5c.map((c) => parseCertificate(Buffer.from(c, 'base64')));
  const [leaf, ...rest] = certs;
  if (!leaf || certs.some((c) => c === null)) throw new Error('the BLOB carries no usable x5c chain');
  const intermediates = rest.filter((c) => c !== null);
  if (!chainsTo(leaf, intermediates, [root], now)) throw new Error('the BLOB does not chain to the root');
  const alg = typeof header.alg === 'string' ? header.alg : '';
  const key = await importX509(leaf.toString(), alg);
  const { payload } = await compactVerify(blob.trim(), key, {
    algorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'],
  });
  const body = JSON.parse(new TextDecoder().decode(payload)) as { entries?: unknown };
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

export interface FidoMetadataSource {
  blobFile: string | null;
  rootFile: string | null;
}

export interface MetadataLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** The operator's metadata as last loaded; `entries()` re-reads the files once they change. */
export class FidoMetadata {
  private loaded: Map<string, FidoEntry> | null = null;
  private stamp = '';

  private readonly source: FidoMetadataSource;
  private readonly log: MetadataLog;
  private readonly now: () => Date;

  constructor(source: FidoMetadataSource, log: MetadataLog, now: () => Date) {
    this.source = source;
    this.log = log;
    this.now = now;
  }

  get configured(): boolean {
    return this.source.blobFile !== null && this.source.rootFile !== null;
  }

  /** Entries by AAGUID; empty when none are configured or none ever verified. */
  async entries(): Promise<ReadonlyMap<string, FidoEntry>> {
    const { blobFile, rootFile } = this.source;
    if (!blobFile || !rootFile) return new Map();
    let stamp: string;
    try {
      const [b, r] = await Promise.all([stat(blobFile), stat(rootFile)]);
      stamp = `${b.mtimeMs}:${b.size}:${r.mtimeMs}:${r.size}`;
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, 'FIDO metadata files are not readable');
      return this.loaded ?? new Map();
    }
    if (stamp !== this.stamp) {
      this.stamp = stamp;
      try {
        const [blob, root] = await Promise.all([readFile(blobFile, 'utf8'), readFile(rootFile, 'utf8')]);
        this.loaded = await verifyMetadataBlob(blob, root, this.now());
        this.log.info({ entries: this.loaded.size }, 'FIDO metadata loaded');
      } catch (e) {
        this.log.warn(
          { err: (e as Error).message },
          'FIDO metadata did not verify; keeping the last good one',
        );
      }
    }
    return this.loaded ?? new Map();
  }
}
