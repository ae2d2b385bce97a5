// Sign-in certificates issued by a test CA (docs/certificate-signin.md): a leaf for TLS client
// authentication naming its user in the subjectAltName (email or UPN) or the subject, with the
// key in PEM so a TLS client can present it. CAs come from attestation-ca.ts.
import 'reflect-metadata';
import { createPrivateKey, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { TestCa } from './attestation-ca.ts';
import type { TestCertificate } from './mtls-certs.ts';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;
let serial = 0x7000;

export interface UserCertificateOptions {
  /** subjectAltName rfc822Name values. */
  emails?: string[];
  /** subjectAltName otherName UPN value. */
  upn?: string;
  /** Subject common name (default "Test User"). */
  cn?: string;
  /** Valid from 30 days ago until yesterday. */
  expired?: boolean;
  /** extKeyUsage purposes (default clientAuth); null leaves the extension out. */
  extendedKeyUsage?: string[] | null;
}

export async function issueUserCertificate(
  issuer: TestCa,
  opts: UserCertificateOptions = {},
): Promise<TestCertificate> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const names: x509.JsonGeneralName[] = [
    ...(opts.emails ?? []).map((value) => ({ type: 'email' as const, value })),
    ...(opts.upn ? [{ type: 'upn' as const, value: opts.upn }] : []),
  ];
  const eku =
    opts.extendedKeyUsage === undefined ? [x509.ExtendedKeyUsage.clientAuth] : opts.extendedKeyUsage;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: (serial++).toString(16),
    subject: `CN=${opts.cn ?? 'Test User'}, O=ProudAuth Tests`,
    issuer: issuer.cert.subject,
    notBefore: new Date(now - (opts.expired ? 30 : 1) * DAY),
    notAfter: new Date(now + (opts.expired ? -1 : 30) * DAY),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      ...(eku === null ? [] : [new x509.ExtendedKeyUsageExtension(eku)]),
      ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : []),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })
    .export({ type: 'pkcs8', format: 'pem' })
    .toString();
  return { certPem: cert.toString('pem'), keyPem, der: Buffer.from(cert.rawData), jwk: {} };
}
