// DPoP at a resource server (RFC 9449 section 7) with the limits of document 1, Authentication 8:
// a token whose cnf names a key thumbprint (`jkt`) is accepted only with a proof in the `DPoP`
// header that the same key signed for this request (method, URL without query and fragment), for
// this token (`ath`), fresh (at most 2 minutes old, 30 seconds ahead) and used once. Server nonces
// (RFC 9449 section 9) are not asked for.
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, errors, type JWK, jwtVerify } from 'jose';
import { VerificationError } from './errors.ts';

export const DPOP_ALGORITHMS = ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'];
const MAX_PROOF_BYTES = 4096;
const MAX_AGE_MS = 120_000;
const MAX_FUTURE_MS = 30_000;
const MAX_JTI_BYTES = 128;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** What the request presented with a `DPoP` token. */
export interface DpopRequest {
  /** The `DPoP` header value(s); more than one is refused. */
  proof: string | string[] | undefined;
  /** The request method, as received. */
  method: string;
  /** The URL the client sent the request to (behind a proxy: the public one). */
  url: string;
}

/**
 * Remembers used proofs. The default keeps them in this process; resource servers with several
 * processes pass a shared store (for example a `SET key NX PX` in Redis).
 */
export interface DpopReplayCache {
  /** True the first time `key` is seen before `expiresAtMs`, false for a replay. */
  useOnce(key: string, expiresAtMs: number): boolean | Promise<boolean>;
}

/** A bounded in-memory replay cache; when it is full of live entries it refuses (fails closed). */
export class MemoryReplayCache implements DpopReplayCache {
  private readonly seen = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly now: () => number;
  constructor(maxEntries = 100_000, now: () => number = Date.now) {
    this.maxEntries = maxEntries;
    this.now = now;
  }

  useOnce(key: string, expiresAtMs: number): boolean {
    const now = this.now();
    const until = this.seen.get(key);
    if (until !== undefined && until > now) return false;
    if (this.seen.size >= this.maxEntries) {
      for (const [k, t] of this.seen) if (t <= now) this.seen.delete(k);
      if (this.seen.size >= this.maxEntries)
        throw new VerificationError('unavailable', 'the DPoP replay cache is full');
    }
    this.seen.set(key, expiresAtMs);
    return true;
  }
}

export const invalidProof = (why: string, cause?: unknown) =>
  new VerificationError('invalid_dpop_proof', why, cause === undefined ? undefined : { cause });

/** The scheme, host, port and path of a URL (RFC 3986 section 6.2.2 and 6.2.3 normalisation). */
function htuOf(url: string): string | null {
  if (!URL.canParse(url)) return null;
  const u = new URL(url);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
  return `${u.protocol}//${u.host}${u.pathname}`;
}

function keyFits(alg: string, jwk: JWK): boolean {
  if (alg === 'RS256' || alg === 'PS256') {
    if (jwk.kty !== 'RSA' || typeof jwk.n !== 'string') return false;
    const n = Buffer.from(jwk.n, 'base64url');
    let lead = 0;
    while (lead < n.length && n[lead] === 0) lead++;
    return (n.length - lead) * 8 >= 2048;
  }
  if (alg === 'ES256') return jwk.kty === 'EC' && jwk.crv === 'P-256';
  return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
}

function headerOf(proof: string): { alg: string; jwk: JWK } {
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(proof.slice(0, proof.indexOf('.')), 'base64url').toString('utf8'));
  } catch {
    throw invalidProof('the proof header is not JSON');
  }
  const h = (typeof header === 'object' && header !== null ? header : {}) as Record<string, unknown>;
  const { alg, jwk } = h;
  if (typeof alg !== 'string' || !DPOP_ALGORITHMS.includes(alg)) throw invalidProof('algorithm not allowed');
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw invalidProof('no jwk');
  if (PRIVATE_MEMBERS.some((m) => Object.hasOwn(jwk, m))) throw invalidProof('the jwk holds private members');
  if (!keyFits(alg, jwk as JWK)) throw invalidProof('the key does not fit its algorithm');
  return { alg, jwk: jwk as JWK };
}

/**
 * Checks the proof of a request for `token`, bound to the key thumbprint `jkt`; throws
 * invalid_dpop_proof (or unavailable from the replay cache) unless every rule holds.
 */
export async function checkDpopProof(
  request: DpopRequest,
  token: string,
  jkt: string,
  replay: DpopReplayCache,
  nowMs: number,
): Promise<void> {
  const proof = request.proof;
  if (typeof proof !== 'string') throw invalidProof('exactly one DPoP header is required');
  if (Buffer.byteLength(proof) > MAX_PROOF_BYTES) throw invalidProof('the proof is larger than 4096 bytes');
  if (!COMPACT_JWS.test(proof)) throw invalidProof('the proof is not one compact JWS');
  const { jwk } = headerOf(proof);
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: DPOP_ALGORITHMS,
      currentDate: new Date(nowMs),
      // The age window below is the rule; exp and nbf are not DPoP claims.
      clockTolerance: Number.MAX_SAFE_INTEGER,
    }));
  } catch (e) {
    if (e instanceof errors.JOSEError) throw invalidProof(`the proof does not verify (${e.code})`, e);
    throw e;
  }
  const { jti, htm, htu, iat, ath } = payload;
  if (typeof jti !== 'string' || jti === '' || Buffer.byteLength(jti) > MAX_JTI_BYTES)
    throw invalidProof('jti must be 1..128 bytes');
  if (htm !== request.method) throw invalidProof('htm does not match the request method');
  const want = htuOf(request.url);
  if (typeof htu !== 'string' || want === null || htuOf(htu) !== want)
    throw invalidProof('htu does not match the request URL');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalidProof('iat is missing');
  if (iat * 1000 < nowMs - MAX_AGE_MS) throw invalidProof('the proof is too old');
  if (iat * 1000 > nowMs + MAX_FUTURE_MS) throw invalidProof('the proof is issued in the future');
  if (ath !== createHash('sha256').update(token, 'ascii').digest('base64url'))
    throw invalidProof('ath does not match the access token');
  const thumbprint = await calculateJwkThumbprint(jwk, 'sha256');
  if (thumbprint !== jkt) throw invalidProof('the proof is signed by another key than the token is bound to');
  const key = createHash('sha256').update(`${thumbprint}\n${jti}`).digest('base64url');
  if (!(await replay.useOnce(key, iat * 1000 + MAX_AGE_MS))) throw invalidProof('the proof was used before');
}

/** The key thumbprint of a `cnf` that is exactly `{ "jkt": ... }`, or null. */
export function boundKeyOf(cnf: unknown): string | null {
  if (typeof cnf !== 'object' || cnf === null || Array.isArray(cnf)) return null;
  const members = Object.keys(cnf);
  const jkt = (cnf as Record<string, unknown>).jkt;
  return members.length === 1 && typeof jkt === 'string' && jkt !== '' ? jkt : null;
}

/**
 * The confirmation rule for verified claims: no `cnf` and no proof (a bearer token); or a `jkt`
 * token with a valid proof. Anything else is refused.
 */
export async function confirmPossession(
  cnf: unknown,
  token: string,
  dpop: DpopRequest | undefined,
  replay: DpopReplayCache,
  nowMs: number,
): Promise<void> {
  if (cnf === undefined && dpop === undefined) return;
  if (dpop === undefined)
    throw new VerificationError('invalid_token', 'a sender-constrained token needs its proof');
  const jkt = boundKeyOf(cnf);
  if (jkt === null) throw new VerificationError('invalid_token', 'the token is not bound to a DPoP key');
  await checkDpopProof(dpop, token, jkt, replay, nowMs);
}
