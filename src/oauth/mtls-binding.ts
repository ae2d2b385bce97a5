// Certificate-bound access tokens (RFC 8705 section 3, docs/oauth-mtls.md): a token request that
// presents a client certificate, over the mutual-TLS listener or from a trusted proxy, gets
// access tokens whose cnf names that certificate's SHA-256 thumbprint.
import type { FastifyRequest } from 'fastify';
import type { Confirmation } from '../access/access-token.ts';

export function certificateConfirmation(req: FastifyRequest): Confirmation | null {
  const cert = req.clientCertificate;
  return cert ? { 'x5t#S256': cert.thumbprint } : null;
}
