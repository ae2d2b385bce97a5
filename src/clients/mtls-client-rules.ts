// Registration rules for self_signed_tls_client_auth keys (RFC 8705 section 2.2,
// docs/oauth-mtls.md): every key carries its certificate as the first x5c entry, node:crypto reads
// it, and the certificate's public key is the key itself, so the certificate the client presents
// later is the one registered.
import { createPublicKey, type JsonWebKey, X509Certificate } from 'node:crypto';
import type { FieldError } from '../platform/http/problem.ts';

/** At most this many certificates in one key's x5c (ours only reads the first). */
const MAX_X5C = 10;

function keyMatchesCertificate(key: Record<string, unknown>, cert: X509Certificate): boolean {
  try {
    const fromJwk = createPublicKey({ key: key as JsonWebKey, format: 'jwk' }).export({
      type: 'spki',
      format: 'der',
    });
    return cert.publicKey.export({ type: 'spki', format: 'der' }).equals(fromJwk);
  } catch {
    return false;
  }
}

/** Errors for keys without a readable x5c certificate matching the key. */
export function checkCertificateKeys(keys: Record<string, unknown>[], errors: FieldError[]): void {
  keys.forEach((key, i) => {
    const x5c = key.x5c;
    const field = `jwks.keys[${i}].x5c`;
    if (
      !Array.isArray(x5c) ||
      x5c.length === 0 ||
      x5c.length > MAX_X5C ||
      !x5c.every((c) => typeof c === 'string')
    ) {
      errors.push({
        field,
        code: 'required',
        detail: 'self_signed_tls_client_auth keys carry their certificate in x5c',
      });
      return;
    }
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(Buffer.from(x5c[0] as string, 'base64'));
    } catch {
      errors.push({ field: `${field}[0]`, code: 'invalid_certificate' });
      return;
    }
    if (!keyMatchesCertificate(key, cert))
      errors.push({
        field: `${field}[0]`,
        code: 'key_mismatch',
        detail: 'the certificate is not for this key',
      });
  });
}
