// Mutual TLS for tests (docs/oauth-mtls.md): self-signed certificates made with @peculiar/x509, a
// mutual-TLS listener of the harness's own routes, and an undici fetch that presents a client
// certificate to it.
import 'reflect-metadata';
import { createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { FastifyInstance } from 'fastify';
import { Agent, fetch as undiciFetch } from 'undici';
import { buildPublicApp } from '../../src/main/http-server.ts';
import type { Harness } from './harness.ts';

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

/** The harness's public routes on a mutual-TLS listener; closed when the test ends. */
export async function startMtlsListener(
  t: { after(fn: () => Promise<void>): void },
  h: Harness,
  server: TestCertificate,
): Promise<{ app: FastifyInstance; url: string }> {
  const app = buildPublicApp(h.ctx, { cert: Buffer.from(server.certPem), key: Buffer.from(server.keyPem) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  const a = app.server.address();
  if (!a || typeof a === 'string') throw new Error('not listening');
  return { app, url: `https://127.0.0.1:${a.port}` };
}

/** A fetch to the mutual-TLS listener trusting `server`, presenting `client` when given. */
export function mtlsFetch(
  t: { after(fn: () => Promise<void>): void },
  server: TestCertificate,
  client?: TestCertificate,
): typeof fetch {
  const agent = new Agent({
    connect: { ca: server.certPem, ...(client ? { cert: client.certPem, key: client.keyPem } : {}) },
  });
  t.after(() => agent.close());
  // undici's own Response is the same class global fetch returns on Node 20, under another type.
  return ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;
}

/** RFC 9440 Client-Cert header value of a certificate. */
export const clientCertHeader = (c: TestCertificate): string => `:${c.der.toString('base64')}:`;
