// Mutual-TLS client authentication (RFC 8705 section 2, docs/oauth-mtls.md). The request carries
// only client_id; the client certificate of the connection (or of a trusted proxy's Client-Cert
// header) proves the client:
// - self_signed_tls_client_auth: the certificate is the first x5c certificate of one of the
//   client's registered keys (section 2.2);
// - tls_client_auth: the certificate is issued by one of the client's registered CA certificates
//   and carries its registered subject DN or subject alternative name (section 2.1,
//   tls-client-auth.ts).
import type { X509Certificate } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';
import type { ClientAuthFacts } from './client-auth.repo.ts';
import { tlsClientAuthProves } from './tls-client-auth.ts';

export const MTLS_METHODS = ['tls_client_auth', 'self_signed_tls_client_auth'] as const;
export type MtlsMethod = (typeof MTLS_METHODS)[number];

export const isMtlsMethod = (m: string): m is MtlsMethod => (MTLS_METHODS as readonly string[]).includes(m);

/** Whether a registered key's first x5c certificate is exactly the presented one (DER equality). */
export function selfSignedMatches(jwks: JSONWebKeySet | null, cert: X509Certificate): boolean {
  for (const key of jwks?.keys ?? []) {
    const first = Array.isArray(key.x5c) ? key.x5c[0] : undefined;
    if (typeof first !== 'string') continue;
    const der = Buffer.from(first, 'base64');
    if (der.length === cert.raw.length && der.equals(cert.raw)) return true;
  }
  return false;
}

/** Whether the presented certificate proves the client under its registered mutual-TLS method. */
export function certificateProves(client: ClientAuthFacts, cert: X509Certificate | null, now: Date): boolean {
  if (!cert) return false;
  if (client.token_endpoint_auth_method === 'self_signed_tls_client_auth')
    return selfSignedMatches(client.jwks, cert);
  if (client.token_endpoint_auth_method === 'tls_client_auth')
    return tlsClientAuthProves(client.tls_client_auth, cert, now);
  return false;
}
