// Compact JWS signing for the tokens this service issues, and the one algorithm allowlist shared
// by signing and verification (spec doc 1, Authentication 7; doc 2, signing-key rotations).
import { CompactSign } from 'jose';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import type { Signer } from './key-store.ts';

export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];

export const isSigningAlgorithm = (alg: unknown): alg is SigningAlgorithm =>
  typeof alg === 'string' && (SIGNING_ALGORITHMS as readonly string[]).includes(alg);

const encoder = new TextEncoder();

/** Integer seconds since the epoch (JWT NumericDate), truncated so a claim never lies ahead. */
export const epochSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/**
 * Signs `claims` with the realm's active key. A signer with an algorithm outside the allowlist
 * is a broken key row, not a request error, so it throws.
 */
export async function signJwt(signer: Signer, typ: string, claims: Record<string, unknown>): Promise<string> {
  if (!isSigningAlgorithm(signer.algorithm)) {
    throw new Error(`signing key ${signer.kid} has unsupported algorithm ${signer.algorithm}`);
  }
  // The claims are complete as given, so the serialized payload is signed directly: SignJWT's claim
  // builder cost about a third of an ES256 token's signing time and adds nothing here.
  return new CompactSign(encoder.encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: signer.algorithm, kid: signer.kid, typ })
    .sign(signer.key);
}
