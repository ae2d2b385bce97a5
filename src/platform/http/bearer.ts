// Bearer credentials from the Authorization header only (spec doc 1, Authentication 7).
import { createHash, timingSafeEqual } from 'node:crypto';

/** The token of an `Authorization: Bearer` header, or null when absent, malformed or oversized. */
export function bearerToken(header: string | undefined, maxTokenBytes: number): string | null {
  if (!header) return null;
  const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  const token = m?.[1];
  if (!token || Buffer.byteLength(token) > maxTokenBytes) return null;
  return token;
}

/** Constant-time equality of two secrets of any length (digests first, so lengths do not leak). */
export function secretsEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}
