// OpenID Connect ID tokens (OIDC Core 1.0 sections 2 and 3.1.3.6); lifetime tokens.id_token_ttl
// (spec doc 1, Limits).
import { createHash } from 'node:crypto';
import { epochSeconds, isSigningAlgorithm, signJwt } from '../../keys/jws.ts';
import type { Signer } from '../../keys/key-store.ts';
import type { SigningAlgorithm } from '../../platform/config/settings.ts';

export const ID_TOKEN_TYP = 'JWT';

export interface IdTokenInput {
  issuer: string;
  subject: string;
  clientId: string;
  authTime: Date;
  /** tokens.id_token_ttl */
  ttlMs: number;
  nonce?: string | null;
  acr?: string | null;
  amr?: readonly string[] | null;
  sessionId?: string | null;
  /** The organization the user signed in to. */
  orgId?: string | null;
  /** The access token issued in the same response, bound through at_hash. */
  accessToken?: string | null;
  /** The granted scopes' claims about the user (scope-claims.ts); none for a minimal ID token. */
  scopeClaims?: Record<string, unknown>;
}

// aud is always exactly the client, so azp (needed only when another audience is present or the
// sole audience is not the authorized party) never is.
export interface IdTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  auth_time: number;
  nonce?: string;
  acr?: string;
  amr?: string[];
  sid?: string;
  org_id?: string;
  at_hash?: string;
}

/**
 * The hash of the JWS algorithm: SHA-256 for the *256 algorithms; for EdDSA the curve decides,
 * and our EdDSA keys are Ed25519, whose hash is SHA-512 (OIDC Core errata set 2).
 */
const HASH_OF: Record<SigningAlgorithm, 'sha256' | 'sha512'> = {
  RS256: 'sha256',
  PS256: 'sha256',
  ES256: 'sha256',
  EdDSA: 'sha512',
};

/** at_hash: base64url of the left half of the hash of the token's ASCII octets. */
export function accessTokenHash(accessToken: string, alg: SigningAlgorithm): string {
  const digest = createHash(HASH_OF[alg]).update(accessToken).digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

export function idTokenClaims(input: IdTokenInput, alg: SigningAlgorithm, now: Date): IdTokenClaims {
  const lifetime = Math.floor(input.ttlMs / 1000);
  if (!Number.isInteger(lifetime) || lifetime < 1) throw new RangeError('ttlMs must be at least one second');
  const iat = epochSeconds(now);
  const claims: IdTokenClaims = {
    iss: input.issuer,
    sub: input.subject,
    aud: input.clientId,
    exp: iat + lifetime,
    iat,
    // Always present: clients that sent max_age need it, and the others lose nothing.
    auth_time: epochSeconds(input.authTime),
  };
  if (input.nonce) claims.nonce = input.nonce;
  if (input.acr) claims.acr = input.acr;
  if (input.amr && input.amr.length > 0) claims.amr = [...input.amr];
  if (input.sessionId) claims.sid = input.sessionId;
  if (input.orgId) claims.org_id = input.orgId;
  if (input.accessToken) claims.at_hash = accessTokenHash(input.accessToken, alg);
  return claims;
}

export interface SignedIdToken {
  token: string;
  claims: IdTokenClaims & Record<string, unknown>;
}

export async function signIdToken(input: IdTokenInput, signer: Signer, now: Date): Promise<SignedIdToken> {
  if (!isSigningAlgorithm(signer.algorithm)) {
    throw new Error(`signing key ${signer.kid} has unsupported algorithm ${signer.algorithm}`);
  }
  // The protocol claims come last: no scope claim can stand in for one of them.
  const claims = { ...input.scopeClaims, ...idTokenClaims(input, signer.algorithm, now) };
  return { token: await signJwt(signer, ID_TOKEN_TYP, claims), claims };
}
