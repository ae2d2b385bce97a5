// Offline verification (document 2, Revocation exposure: signature, issuer, audience, type, times):
// the realm's key set is fetched from {issuer}/jwks and fetched again when a token names a key id it
// does not hold (a rotation). Only the asymmetric algorithms of document 1, Authentication 7 pass;
// a token bound to a key or certificate (cnf) is refused, as ordinary token-only verification must,
// unless it is bound to a DPoP key and the request's proof is given and valid (dpop.ts).
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from 'jose';
import { confirmPossession, type DpopReplayCache, type DpopRequest, MemoryReplayCache } from './dpop.ts';
import { invalidToken, VerificationError } from './errors.ts';

export const ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];
/** Default clock tolerance 30 s, at most 60 s (document 1, Authentication 7). */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;
export const MAX_CLOCK_TOLERANCE_SECONDS = 60;

export interface OfflineOptions {
  /** The realm's issuer, `{public_origin}/realms/{realm}`. */
  issuer: string;
  /** This resource server's audience. */
  audience: string;
  clockToleranceSeconds?: number;
  /** The key set's address; default `{issuer}/jwks`. */
  jwksUri?: string;
  /** The shortest time between two key-set fetches caused by unknown key ids (default 30 s). */
  jwksCooldownMs?: number;
  /** The clock, in milliseconds since the epoch (tests). */
  now?: () => number;
  /** Where used DPoP proofs are remembered; default this process's memory. */
  dpopReplayCache?: DpopReplayCache;
}

/** The verified claims of an access token. */
export interface AccessClaims extends JWTPayload {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  client_id?: string;
  scope?: string;
  sid?: string;
  org_id?: string;
  grant_client_id?: string;
}

/** The kid a verified token was signed with, with its claims. */
export interface Verified {
  claims: AccessClaims;
  kid: string | undefined;
}

export interface OfflineVerifier {
  /** With `dpop` for a token of the `DPoP` scheme: the proof must hold for the token's key. */
  verify(token: string, dpop?: DpopRequest): Promise<Verified>;
  /** Fetches the key set now, cooldown or not (an emergency rotation brought a new key). */
  reloadKeys(): Promise<void>;
}

export function offlineVerifier(opts: OfflineOptions): OfflineVerifier {
  const tolerance = opts.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  if (!Number.isInteger(tolerance) || tolerance < 0 || tolerance > MAX_CLOCK_TOLERANCE_SECONDS)
    throw new RangeError(`clockToleranceSeconds must be 0..${MAX_CLOCK_TOLERANCE_SECONDS}`);
  const keys = createRemoteJWKSet(new URL(opts.jwksUri ?? `${opts.issuer}/jwks`), {
    cooldownDuration: opts.jwksCooldownMs ?? 30_000,
    cacheMaxAge: 300_000,
  });
  const now = opts.now ?? Date.now;
  const replay = opts.dpopReplayCache ?? new MemoryReplayCache(100_000, now);
  return {
    reloadKeys: () => keys.reload(),
    async verify(token, dpop) {
      let verified: Awaited<ReturnType<typeof jwtVerify>>;
      try {
        verified = await jwtVerify(token, keys, {
          issuer: opts.issuer,
          audience: opts.audience,
          typ: 'at+jwt',
          algorithms: ALGORITHMS,
          clockTolerance: tolerance,
          currentDate: new Date(now()),
          requiredClaims: ['sub', 'jti', 'iat', 'exp'],
        });
      } catch (e) {
        // The key set could not be fetched: nothing was decided about the token.
        if (e instanceof errors.JWKSTimeout || (e instanceof TypeError && !(e instanceof errors.JOSEError)))
          throw new VerificationError('unavailable', 'the key set could not be fetched', { cause: e });
        throw invalidToken(e instanceof Error ? e.message : 'the token did not verify', e);
      }
      const claims = verified.payload as AccessClaims;
      await confirmPossession(claims.cnf, token, dpop, replay, now());
      return { claims, kid: verified.protectedHeader.kid };
    },
  };
}
