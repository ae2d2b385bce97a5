// private_key_jwt (RFC 7523 section 3, OpenID Connect Core section 9): a JWT the client signs
// with a key from the key set registered on it. Checks here are local and pure; single use of the
// assertion id is recorded by client-auth.ts once everything else passed.
import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, jwtVerify } from 'jose';
import { oauthError } from '../kernel/oauth-error.ts';

// The signature algorithms the service accepts anywhere (spec doc 1, Authentication 7); never HS* or none.
export const CLIENT_SIGNING_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];
/** Longest time before `exp` an assertion may be presented; bounds the replay record too. */
export const MAX_ASSERTION_LIFETIME_SECONDS = 3600;
const MAX_JTI_BYTES = 256;

export interface AssertionContext {
  clientId: string;
  jwks: JSONWebKeySet | null;
  /** Accepted `aud` values: the issuer and the URL of the endpoint being called. */
  audiences: readonly string[];
  now: Date;
  clockSkewSeconds: number;
}

export interface VerifiedAssertion {
  jtiDigest: string;
  /** Until when the id must stay recorded: `exp` plus the clock tolerance. */
  replayUntil: Date;
}

/** The client an assertion claims to be (its `sub`), read before the signature can be checked. */
export function assertionSubject(assertion: string): string | null {
  try {
    const sub = decodeJwt(assertion).sub;
    // Client ids are visible ASCII (RFC 6749 appendix A); anything else names no client.
    return typeof sub === 'string' && /^[\x20-\x7e]{1,255}$/.test(sub) ? sub : null;
  } catch {
    return null;
  }
}

export const digestJti = (jti: string): string => createHash('sha256').update(jti, 'utf8').digest('hex');

export async function verifyClientAssertion(
  assertion: string,
  c: AssertionContext,
): Promise<VerifiedAssertion> {
  const fail = (debug: string) => oauthError.invalidClient({ debug });
  if (!c.jwks || !Array.isArray(c.jwks.keys) || c.jwks.keys.length === 0) throw fail('assertion_no_jwks');
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
  try {
    ({ payload } = await jwtVerify(assertion, createLocalJWKSet(c.jwks), {
      algorithms: CLIENT_SIGNING_ALGORITHMS,
      issuer: c.clientId,
      subject: c.clientId,
      audience: [...c.audiences],
      requiredClaims: ['exp', 'jti'],
      clockTolerance: c.clockSkewSeconds,
      currentDate: c.now,
    }));
  } catch (e) {
    throw fail(`assertion_${(e as { code?: string }).code ?? 'invalid'}`);
  }
  const jti = payload.jti;
  const exp = payload.exp as number;
  if (typeof jti !== 'string' || jti === '' || Buffer.byteLength(jti, 'utf8') > MAX_JTI_BYTES) {
    throw fail('assertion_jti_invalid');
  }
  const nowSeconds = c.now.getTime() / 1000;
  if (exp - nowSeconds > MAX_ASSERTION_LIFETIME_SECONDS + c.clockSkewSeconds) {
    throw fail('assertion_lifetime_too_long');
  }
  return { jtiDigest: digestJti(jti), replayUntil: new Date((exp + c.clockSkewSeconds) * 1000) };
}
