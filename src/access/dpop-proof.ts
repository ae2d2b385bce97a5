// DPoP proof checks (RFC 9449 section 4.3) with the limits of spec doc 1, Authentication 8: the
// algorithms and key sizes, the proof size, its age window, the jti length, the exact method, the
// URL compared without query and fragment (decision D5), the access-token hash, and the key
// thumbprint. Pure: single use (the replay cache) and server nonces are checked by the caller
// with what this returns. Bad proofs are a typed result, never an exception.
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, errors, type JWK, jwtVerify } from 'jose';

/** Signature algorithms a proof may use; `Ed25519` is the fully specified name of EdDSA on Ed25519. */
export const DPOP_ALGORITHMS = ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'] as const;
export const MAX_PROOF_BYTES = 4096;
export const PROOF_MAX_AGE_MS = 2 * 60_000;
export const PROOF_MAX_FUTURE_MS = 30_000;
const MAX_JTI_BYTES = 128;
const MIN_RSA_BITS = 2048;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export interface ProofExpectations {
  /** The request's method, compared exactly. */
  method: string;
  /** The URL the request was sent to (query and fragment are ignored). */
  url: string;
  /** At a resource: the access token the proof must name in `ath`. */
  accessToken?: string;
  now: Date;
}

export interface CheckedProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's key, as `cnf.jkt`. */
  jkt: string;
  jti: string;
  /** The `nonce` claim, when the proof carries one. */
  nonce: string | null;
  /** Until when the proof would still pass the age check: its replay-cache lifetime. */
  replayUntil: Date;
}

export type ProofCheck = { ok: true; proof: CheckedProof } | { ok: false; reason: string };

const fail = (reason: string): ProofCheck => ({ ok: false, reason });

/**
 * The single DPoP header value, or null when absent; several values (repeated headers, which
 * Node joins with commas, or an array) are refused as malformed by checkProof.
 */
export function dpopHeaderOf(headers: Record<string, string | string[] | undefined>): string | null {
  const v = headers.dpop;
  if (v === undefined) return null;
  return Array.isArray(v) ? v.join(',') : v;
}

/** The method, scheme, host, port and path of a URL, normalised (RFC 3986 section 6.2.2/6.2.3). */
export function normalisedHtu(url: string): string | null {
  if (!URL.canParse(url)) return null;
  const u = new URL(url);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
  // WHATWG URL folds scheme and host case and drops a default port; the query and fragment go.
  return `${u.protocol}//${u.host}${u.pathname}`;
}

/** Bytes of an RSA modulus, leading zero bytes aside (a 2048-bit modulus has its top bit set). */
function modulusBytes(n: string): number {
  const bytes = Buffer.from(n, 'base64url');
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return bytes.length - i;
}

function keyFitsAlgorithm(alg: string, jwk: JWK): boolean {
  switch (alg) {
    case 'RS256':
    case 'PS256':
      return jwk.kty === 'RSA' && typeof jwk.n === 'string' && modulusBytes(jwk.n) * 8 >= MIN_RSA_BITS;
    case 'ES256':
      return jwk.kty === 'EC' && jwk.crv === 'P-256';
    case 'EdDSA':
    case 'Ed25519':
      return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
    default:
      return false;
  }
}

/** base64url SHA-256 of the access token, as `ath` (RFC 9449 section 4.2). */
export const accessTokenHash = (token: string): string =>
  createHash('sha256').update(token, 'ascii').digest('base64url');

/** Checks one proof; see the file comment for what is left to the caller. */
export async function checkProof(proof: string, expected: ProofExpectations): Promise<ProofCheck> {
  if (Buffer.byteLength(proof) > MAX_PROOF_BYTES) return fail('the proof is larger than 4096 bytes');
  if (!COMPACT_JWS.test(proof)) return fail('the proof is not one compact JWS');
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(proof.slice(0, proof.indexOf('.')), 'base64url').toString('utf8'));
  } catch {
    return fail('the proof header is not JSON');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    return fail('the proof header is not an object');
  const alg = header.alg;
  if (typeof alg !== 'string' || !(DPOP_ALGORITHMS as readonly string[]).includes(alg))
    return fail('the proof algorithm is not allowed');
  const jwk = header.jwk as JWK | undefined;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return fail('the proof carries no jwk');
  if (PRIVATE_MEMBERS.some((m) => Object.hasOwn(jwk, m))) return fail('the proof jwk holds private members');
  if (!keyFitsAlgorithm(alg, jwk)) return fail('the proof key does not fit its algorithm');

  let payload: Record<string, unknown>;
  try {
    // typ is compared by jose (dpop+jwt, also as application/dpop+jwt); the signature under the
    // embedded key.
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: [...DPOP_ALGORITHMS],
      // Times are judged below with the spec's own window; exp and nbf, if any, are not ours to read.
      currentDate: expected.now,
      clockTolerance: Number.MAX_SAFE_INTEGER,
    }));
  } catch (e) {
    if (e instanceof errors.JOSEError) return fail(`the proof does not verify (${e.code})`);
    throw e;
  }
  const { jti, htm, htu, iat, ath, nonce } = payload;
  if (typeof jti !== 'string' || jti === '' || Buffer.byteLength(jti, 'utf8') > MAX_JTI_BYTES)
    return fail('jti must be 1..128 bytes');
  if (htm !== expected.method) return fail('htm does not match the request method');
  if (typeof htu !== 'string') return fail('htu is missing');
  const want = normalisedHtu(expected.url);
  if (want === null || normalisedHtu(htu) !== want) return fail('htu does not match the request URL');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return fail('iat is missing');
  const nowMs = expected.now.getTime();
  if (iat * 1000 < nowMs - PROOF_MAX_AGE_MS) return fail('the proof is too old');
  if (iat * 1000 > nowMs + PROOF_MAX_FUTURE_MS) return fail('the proof is issued in the future');
  if (expected.accessToken !== undefined) {
    if (typeof ath !== 'string') return fail('ath is missing');
    if (ath !== accessTokenHash(expected.accessToken)) return fail('ath does not match the access token');
  }
  if (nonce !== undefined && typeof nonce !== 'string') return fail('nonce must be a string');
  return {
    ok: true,
    proof: {
      jkt: await calculateJwkThumbprint(jwk, 'sha256'),
      jti,
      nonce: nonce ?? null,
      replayUntil: new Date(iat * 1000 + PROOF_MAX_AGE_MS),
    },
  };
}

/** The replay-cache key of a proof: its key thumbprint and jti, digested together. */
export const proofDigest = (p: CheckedProof): string =>
  createHash('sha256').update(`${p.jkt}\n${p.jti}`, 'utf8').digest('hex');
