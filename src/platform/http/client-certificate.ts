// The client certificate a request presents (RFC 8705, decision D7): the one its TLS connection
// to the service's own mutual-TLS listener carried, or, only when the socket peer is inside
// server.trusted_proxies, the one a proxy forwarded in a `Client-Cert` header (RFC 9440). Anyone
// else's `Client-Cert` header is ignored. DER parsing is left to node:crypto.
import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

export interface PresentedCertificate {
  x509: X509Certificate;
  /** base64url SHA-256 of the DER certificate: the `x5t#S256` confirmation (RFC 8705 section 3.1). */
  thumbprint: string;
}

export interface CertificateSource {
  socket: Socket;
  headers: IncomingHttpHeaders;
}

// RFC 9440 section 2.2: a structured-field byte sequence, base64 between colons.
const BYTE_SEQUENCE = /^:([A-Za-z0-9+/]+={0,2}):$/;

export function thumbprintOf(x509: X509Certificate): string {
  return createHash('sha256').update(x509.raw).digest('base64url');
}

function presented(x509: X509Certificate): PresentedCertificate {
  return { x509, thumbprint: thumbprintOf(x509) };
}

function fromSocket(socket: Socket): X509Certificate | null {
  const tls = socket as Partial<TLSSocket>;
  if (typeof tls.getPeerX509Certificate !== 'function') return null;
  return tls.getPeerX509Certificate() ?? null;
}

/** The certificate of a `Client-Cert` header value; null when it is not exactly one certificate. */
export function parseClientCertHeader(value: string | string[] | undefined): X509Certificate | null {
  if (typeof value !== 'string') return null;
  const b64 = BYTE_SEQUENCE.exec(value.trim())?.[1];
  if (b64 === undefined) return null;
  try {
    return new X509Certificate(Buffer.from(b64, 'base64'));
  } catch {
    return null;
  }
}

/**
 * The request's client certificate, or null. `peerIsTrusted` says whether the socket peer is a
 * trusted proxy (ClientAddresses.peerIsTrusted).
 */
export function clientCertificateOf(
  req: CertificateSource,
  peerIsTrusted: boolean,
): PresentedCertificate | null {
  const own = fromSocket(req.socket);
  if (own) return presented(own);
  if (!peerIsTrusted) return null;
  const forwarded = parseClientCertHeader(req.headers['client-cert']);
  return forwarded ? presented(forwarded) : null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The client certificate presented over mutual TLS or by a trusted proxy (client-certificate.ts). */
    readonly clientCertificate: PresentedCertificate | null;
  }
}
