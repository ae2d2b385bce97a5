// PKCE with the S256 method only (spec doc 1 mandates S256; RFC 7636 sections 4.1, 4.2 and 4.6).

import { Buffer } from 'node:buffer';
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * A base64url SHA-256 digest without padding: 43 characters, and since 43 characters carry 258 bits the
 * last one must leave the 2 spare bits zero. A non-canonical spelling could never equal a computed digest.
 */
export function isS256Challenge(s: unknown): s is string {
  return typeof s === 'string' && /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/.test(s);
}

/** 43..128 characters of the unreserved set (RFC 7636 section 4.1). */
export function isCodeVerifier(s: unknown): s is string {
  return typeof s === 'string' && /^[A-Za-z0-9._~-]{43,128}$/.test(s);
}

export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** Whether BASE64URL(SHA256(verifier)) equals the challenge; the comparison is constant-time. */
export function verifyS256(verifier: string, challenge: string): boolean {
  if (!isCodeVerifier(verifier) || !isS256Challenge(challenge)) return false;
  return timingSafeEqual(Buffer.from(s256Challenge(verifier), 'ascii'), Buffer.from(challenge, 'ascii'));
}
