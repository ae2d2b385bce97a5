// The service-provider key pair of a SAML connection (docs/federation.md, SAML): made when the
// connection is created, RSA 2048 with a self-signed certificate that the connection's SP metadata
// publishes. It signs the AuthnRequests and is the key IdPs encrypt assertions to. The private key
// is sealed under the root key like a client secret; the certificate is public.
import { webcrypto } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/** Long enough that the certificate never needs renewing: IdPs pin the key, not the dates. */
const VALIDITY_YEARS = 20;

const ALGORITHM = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
} as const;

const pem = (label: string, der: ArrayBuffer): string => {
  const b64 = Buffer.from(der).toString('base64');
  return `-----BEGIN ${label}-----\n${b64.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END ${label}-----\n`;
};

export interface SpKeyPair {
  privateKeyPem: string;
  certificatePem: string;
}

export async function newSpKeyPair(commonName: string, now: Date): Promise<SpKeyPair> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + VALIDITY_YEARS);
  const cn = commonName.replace(/[,+="<>#;\\]/g, '_').slice(0, 64);
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex'),
      name: `CN=${cn}`,
      notBefore: new Date(now.getTime() - 60_000),
      notAfter,
      signingAlgorithm: ALGORITHM,
      keys,
      extensions: [
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment),
      ],
    },
    webcrypto,
  );
  return {
    privateKeyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
    certificatePem: cert.toString('pem'),
  };
}

/** A PEM certificate (or its bare base64 body, as metadata carries it) that parses; null otherwise. */
export function normalCertificate(raw: string): string | null {
  const body = raw.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length < 100) return null;
  try {
    const cert = new x509.X509Certificate(Buffer.from(body, 'base64'));
    return cert.toString('pem');
  } catch {
    return null;
  }
}
