// Test certificate authorities for passkey attestation and FIDO metadata (a browser's virtual
// authenticator has one fixed self-issued batch certificate, so trust is tested with these): a root,
// an optional intermediate, batch attestation certificates carrying an AAGUID extension, and an
// MDS3 BLOB signed by a certificate under a metadata root.
import 'reflect-metadata';
import { type KeyObject, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { SignJWT } from 'jose';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export interface TestCa {
  cert: x509.X509Certificate;
  keys: webcrypto.CryptoKeyPair;
  pem: string;
  der: Uint8Array;
}

let serial = 1;
const nextSerial = () => (serial++).toString(16).padStart(4, '0');

async function keyPair(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

function wrap(cert: x509.X509Certificate, keys: webcrypto.CryptoKeyPair): TestCa {
  return { cert, keys, pem: cert.toString('pem'), der: new Uint8Array(cert.rawData) };
}

/** How a test CA certificate is built; every member defaults to a well-formed CA. */
export interface CaOptions {
  /** basicConstraints cA (default true). */
  ca?: boolean;
  /** basicConstraints pathLenConstraint (default none). */
  pathLen?: number;
  /** keyUsage flags; `null` leaves the extension out (default keyCertSign and cRLSign). */
  keyUsage?: number | null;
  /** Valid from 30 days ago until yesterday. */
  expired?: boolean;
}

const CA_USAGE = x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign;

function caExtensions(opts: CaOptions): x509.Extension[] {
  const usage = opts.keyUsage === undefined ? CA_USAGE : opts.keyUsage;
  return [
    new x509.BasicConstraintsExtension(opts.ca ?? true, opts.pathLen, true),
    ...(usage === null ? [] : [new x509.KeyUsagesExtension(usage, true)]),
  ];
}

const validity = (expired: boolean | undefined, now = Date.now()) => ({
  notBefore: new Date(now - (expired ? 30 : 1) * DAY),
  notAfter: new Date(now + (expired ? -1 : 3650) * DAY),
});

export async function makeRoot(name = 'Test Attestation Root', opts: CaOptions = {}) {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: nextSerial(),
    name: `CN=${name}, O=ProudAuth Tests`,
    ...validity(opts.expired),
    keys,
    signingAlgorithm: ALG,
    extensions: caExtensions(opts),
  });
  return wrap(cert, keys);
}

export async function makeIntermediate(
  issuer: TestCa,
  name = 'Test Attestation Intermediate',
  opts: CaOptions = {},
) {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: nextSerial(),
    subject: `CN=${name}, O=ProudAuth Tests`,
    issuer: issuer.cert.subject,
    ...validity(opts.expired),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALG,
    extensions: caExtensions(opts),
  });
  return wrap(cert, keys);
}

const aaguidBytes = (aaguid: string) => Buffer.from(aaguid.replace(/-/g, ''), 'hex');

/** A packed batch attestation certificate (WebAuthn 8.2.1 requirements) for `aaguid`. */
export async function makeAttestationLeaf(
  issuer: TestCa,
  aaguid: string,
  opts: { ca?: boolean; expired?: boolean; criticalExtension?: string } = {},
) {
  const keys = await keyPair();
  const ext = Buffer.concat([Buffer.from([0x04, 0x10]), aaguidBytes(aaguid)]);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: nextSerial(),
    subject: 'C=US, O=ProudAuth Test Vendor, OU=Authenticator Attestation, CN=Test Batch',
    issuer: issuer.cert.subject,
    ...validity(opts.expired),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(opts.ca ?? false, undefined, true),
      new x509.Extension('1.3.6.1.4.1.45724.1.1.4', false, ext),
      ...(opts.criticalExtension
        ? [new x509.Extension(opts.criticalExtension, true, new Uint8Array([0x05, 0x00]))]
        : []),
    ],
  });
  return wrap(cert, keys);
}

/** The leaf's private key as node:crypto signs with it (DER ECDSA signatures). */
export async function nodeKey(ca: TestCa): Promise<KeyObject> {
  const { KeyObject } = await import('node:crypto');
  return KeyObject.from(ca.keys.privateKey);
}

export interface MdsEntry {
  aaguid: string;
  roots: TestCa[];
  statuses?: string[];
}

/**
 * An MDS3 BLOB signed by a certificate issued by `root`, carrying the entries; its nextUpdate is
 * 30 days from now unless given (YYYY-MM-DD).
 */
export async function makeMetadataBlob(
  root: TestCa,
  entries: MdsEntry[],
  opts: { nextUpdate?: string } = {},
): Promise<string> {
  const signer = await makeIntermediate(root, 'Test Metadata Signer');
  const b64 = (c: TestCa) => Buffer.from(c.der).toString('base64');
  return new SignJWT({
    legalHeader: 'test metadata',
    no: 1,
    nextUpdate: opts.nextUpdate ?? new Date(Date.now() + 30 * DAY).toISOString().slice(0, 10),
    entries: entries.map((e) => ({
      aaguid: e.aaguid,
      metadataStatement: {
        aaguid: e.aaguid,
        description: 'Test authenticator',
        attestationTypes: ['basic_full'],
        attestationRootCertificates: e.roots.map(b64),
      },
      statusReports: (e.statuses ?? ['FIDO_CERTIFIED']).map((status) => ({
        status,
        effectiveDate: '2026-01-01',
      })),
      timeOfLastStatusChange: '2026-01-01',
    })),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', x5c: [b64(signer)] })
    .sign(signer.keys.privateKey);
}
