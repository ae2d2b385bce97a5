// Self-signed test certificates made with @peculiar/x509 (mutual TLS, docs/oauth-mtls.md): PEM
// certificate and key for TLS, the DER bytes, and the public key as a JWK with x5c.
import 'reflect-metadata';
import { createHash, createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
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

export interface TestCa extends TestCertificate {
  keys: webcrypto.CryptoKeyPair;
  name: string;
}

async function pemKey(keys: webcrypto.CryptoKeyPair): Promise<string> {
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })
    .export({ type: 'pkcs8', format: 'pem' })
    .toString();
}

/** A self-signed CA certificate (basicConstraints cA, keyCertSign) for tls_client_auth. */
export async function testCa(name: string, opts: { ca?: boolean; notAfter?: Date } = {}): Promise<TestCa> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const isCa = opts.ca ?? true;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: (serial++).toString(16).padStart(4, '0'),
    name,
    notBefore: new Date(now - DAY),
    notAfter: opts.notAfter ?? new Date(now + 30 * DAY),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(isCa, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
    ],
  });
  const der = Buffer.from(cert.rawData);
  return { certPem: cert.toString('pem'), keyPem: await pemKey(keys), der, jwk: {}, keys, name };
}

/**
 * A client certificate `ca` issued. `subject` is written in @peculiar/x509's order (the encoded
 * sequence's order), so `C=DE, O=Acme, CN=svc` reads `CN=svc,O=Acme,C=DE` in RFC 4514.
 */
export async function issuedCertificate(
  ca: TestCa,
  subject: string,
  sans: { type: 'dns' | 'url' | 'ip' | 'email'; value: string }[] = [],
  validity: { notBefore?: Date; notAfter?: Date } = {},
): Promise<TestCertificate> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: (serial++).toString(16).padStart(4, '0'),
    subject,
    issuer: ca.name,
    notBefore: validity.notBefore ?? new Date(now - DAY),
    notAfter: validity.notAfter ?? new Date(now + 30 * DAY),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALG,
    extensions: sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : [],
  });
  const der = Buffer.from(cert.rawData);
  return { certPem: cert.toString('pem'), keyPem: await pemKey(keys), der, jwk: {} };
}

/** base64url SHA-256 of the certificate's DER: its `x5t#S256` (RFC 8705 section 3.1). */
export const certThumbprint = (c: TestCertificate): string =>
  createHash('sha256').update(c.der).digest('base64url');
