// Who may act on a transaction (spec doc 1, Authentication 1 and 2). Browser transactions are
// bound to their own HttpOnly cookie, and mutating calls also need an allowed Origin and the CSRF
// token; headless transactions are bound to the continuation token alone. The id authorizes nothing.
import { createHash, timingSafeEqual } from 'node:crypto';
import { digestToken } from '../kernel/digest.ts';
import type { PresentedCertificate } from '../platform/http/client-certificate.ts';
import { Problem } from '../platform/http/problem.ts';
import type { StoredTx } from './signin.repo.ts';

export const CONTINUATION_PREFIX = 'pa_tx_';

export interface CallCredentials {
  cookie: string | null;
  continuationToken: string | null;
  origin: string | null;
  csrfToken: string | null;
  mutating: boolean;
  /** The caller's address, for the sign-in abuse budgets. */
  clientIp?: string | null;
  /** A remembered-device token: the pa_rd cookie, or header X-Remembered-Device when headless. */
  rememberedDevice?: string | null;
  /** The client certificate of the request (mutual-TLS listener or trusted proxy). */
  clientCertificate?: PresentedCertificate | null;
}

/**
 * The CSRF token is derived from the transaction cookie, so nothing extra is stored and only a
 * holder of the HttpOnly cookie (through GET) can learn it.
 */
export const csrfTokenFor = (cookieValue: string): string =>
  createHash('sha256').update(`proudauth/csrf/${cookieValue}`).digest('base64url');

function sameSecret(presented: string, expectedDigest: string): boolean {
  return timingSafeEqual(Buffer.from(digestToken(presented), 'hex'), Buffer.from(expectedDigest, 'hex'));
}

const forbidden = (detail: string) => new Problem(403, 'forbidden', detail);

/** Throws 403 unless the call carries the transaction's own binding. */
export async function authenticateCall(
  stored: StoredTx,
  call: CallCredentials,
  originAllowed: (origin: string) => Promise<boolean>,
): Promise<{ cookie: string | null }> {
  if (stored.tx.mode === 'headless') {
    if (!call.continuationToken || !sameSecret(call.continuationToken, stored.bindingDigest)) {
      throw forbidden('this transaction needs its continuation token in X-Transaction-Token');
    }
    return { cookie: null };
  }
  if (!call.cookie || !sameSecret(call.cookie, stored.bindingDigest)) {
    throw forbidden('this transaction needs its browser cookie');
  }
  if (call.mutating) {
    if (!call.origin || !(await originAllowed(call.origin)))
      throw forbidden('the Origin header is missing or not allowed');
    // Compare bytes, not characters: a non-ASCII header value of the right length in characters
    // would otherwise reach timingSafeEqual with buffers of different lengths and throw.
    const expected = Buffer.from(csrfTokenFor(call.cookie));
    const presented = Buffer.from(call.csrfToken ?? '');
    const ok = presented.length === expected.length && timingSafeEqual(presented, expected);
    if (!ok) throw forbidden('the X-CSRF-Token header is missing or invalid');
  }
  return { cookie: call.cookie };
}
