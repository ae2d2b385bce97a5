// Self-signed test certificates made with @peculiar/x509 (mutual TLS, docs/oauth-mtls.md): PEM
// certificate and key for TLS, the DER bytes, and the public key as a JWK with x5c.
import 'reflect-metadata';
import { createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export interface TestCertificate {
  certPem: string;
  keyPem: string;
  der: Buffer;
  /** The public key as a JWK carrying the certificate in x5c (self_signed_tls_client_auth). */
  jwk: Record<string, unknown>;
}

let serial = 1;

export async function selfSignedCertificate(cn: string, ipSan?: string): Promise<TestCertificate> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: (serial++).toString(16).padStart(4, '0'),
    name: `CN=${cn}`,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 30 * DAY),
    keys,
    signingAlgorithm: ALG,
    extensions: ipSan ? [new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: ipSan }])] : [],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })
    .export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const der = Buffer.from(cert.rawData);
  const jwk = {
    ...new X509Certificate(der).publicKey.export({ format: 'jwk' }),
    x5c: [der.toString('base64')],
  };
  return { certPem: cert.toString('pem'), keyPem, der, jwk };
}
