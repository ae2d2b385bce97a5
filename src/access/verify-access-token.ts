// Offline verification of this service's own JWT access tokens, for its resource-server use (the
// administration and account APIs). Spec doc 1, Authentication 7 and 8; doc 2, Revocation
// exposure (the live checks come on top of this, elsewhere); RFC 9068 section 4; RFC 8725.
// Ordinary bad tokens are a typed result, never an exception; only faults (database, a corrupt
// published key set) throw.
import {
  compactVerify,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import { userinfoAudienceOf } from '../kernel/audiences.ts';
import { isScopeName } from '../kernel/scope.ts';
import { isSigningAlgorithm, SIGNING_ALGORITHMS } from '../keys/jws.ts';
import type { Clock } from '../platform/clock.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import type { Actor, Confirmation } from './access-token.ts';
import { certificateConfirms } from './mtls-confirmation.ts';

export type AccessTokenRejection =
  | 'oversized'
  | 'malformed'
  | 'alg_not_allowed'
  | 'unknown_key'
  | 'bad_signature'
  | 'wrong_typ'
  | 'sender_constrained'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'expired'
  | 'not_yet_valid'
  | 'issued_in_future'
  | 'invalid_claims';

export interface VerifiedAccessToken {
  kid: string;
  algorithm: SigningAlgorithm;
  issuer: string;
  subject: string;
  audiences: string[];
  /** NumericDate seconds, as in the token. */
  expiresAt: number;
  issuedAt: number;
  /** NumericDate seconds; ours carry none. */
  notBefore: number | null;
  tokenId: string;
  clientId: string;
  scopes: string[];
  authTime: number | null;
  acr: string | null;
  amr: string[];
  sessionId: string | null;
  orgId: string | null;
  act: Actor | null;
  /** grant_client_id: after an exchange, the client of the user's grant it derives from. */
  grantClientId: string | null;
  /** support_grant_id: the token acts under a support grant (docs/support-access.md). */
  supportGrantId: string | null;
  /** The token's confirmation; only ever set when the caller asked for senderConstrained. */
  cnf: Confirmation | null;
}

export type AccessTokenVerification =
  | { ok: true; token: VerifiedAccessToken }
  | { ok: false; reason: AccessTokenRejection; claim?: string };

export interface AccessTokenExpectations {
  realmName: string;
  issuer: string;
  audience: string;
  /**
   * The caller proves possession itself (the DPoP scheme): a token with `cnf` is accepted and its
   * confirmation returned. Without it any token with `cnf` is refused (Authentication 8).
   */
  senderConstrained?: boolean;
  /** The request's client-certificate thumbprint: a matching `x5t#S256` token passes (mtls-confirmation.ts). */
  certificateThumbprint?: string | null;
}

/** KeyStore satisfies this; the verifier follows whatever caching it does. */
export interface KeySetSource {
  publishedKeySet(realmName: string): Promise<{ keys: JWK[] } | null>;
}

export interface AccessTokenVerifierOptions {
  keySets: KeySetSource;
  clock: Clock;
  /** tokens.clock_skew */
  clockSkewMs: number;
  /** limits.max_token_bytes */
  maxTokenBytes: number;
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const MAX_ACT_DEPTH = 8;
const SIGNATURE_CACHE_SIZE = 10_000;

/** A token whose signature checked out under a published key. */
interface SignedParts {
  /** The realm whose key set verified it. */
  realmName: string;
  kid: string;
  header: { alg?: unknown; kid?: unknown; typ?: unknown };
  payload: unknown;
}

const reject = (reason: AccessTokenRejection, claim?: string): AccessTokenVerification =>
  claim === undefined ? { ok: false, reason } : { ok: false, reason, claim };

export class AccessTokenVerifier {
  // One jose key set per published body: the key store hands out the same object until its cache
  // expires, so imported keys live exactly as long as its cache entry.
  private readonly resolvers = new WeakMap<object, JWTVerifyGetKey>();
  private readonly publishedKids = new WeakMap<object, Set<string>>();
  private readonly signatures = new Map<string, SignedParts>();

  private readonly keySets: KeySetSource;
  private readonly clock: Clock;
  private readonly clockSkewMs: number;
  private readonly maxTokenBytes: number;

  constructor(options: AccessTokenVerifierOptions) {
    this.keySets = options.keySets;
    this.clock = options.clock;
    this.clockSkewMs = options.clockSkewMs;
    this.maxTokenBytes = options.maxTokenBytes;
  }

  async verify(token: string, expected: AccessTokenExpectations): Promise<AccessTokenVerification> {
    const hit = this.lookup(token, expected.realmName);
    if (!hit) {
      const pre = preflight(token, this.maxTokenBytes);
      if (pre) return pre;
    }
    return this.verifyAfterPreflight(token, expected, hit);
  }

  /** verify() once the token has passed preflight, or is remembered (it passed it then). */
  private async verifyAfterPreflight(
    token: string,
    expected: AccessTokenExpectations,
    hit: SignedParts | undefined,
  ): Promise<AccessTokenVerification> {
    const keySet = await this.keySets.publishedKeySet(expected.realmName);
    if (!keySet) return reject('unknown_key');
    // A remembered signature counts only while its key is still published (a key removed from
    // the set, e.g. compromised, takes its tokens with it at the next key-set refresh).
    let signed = hit && this.kidsOf(keySet).has(hit.kid) ? hit : undefined;
    if (!signed) {
      const fresh = await this.checkSignature(token, keySet, expected.realmName);
      if (!fresh.ok) return fresh.rejection;
      signed = fresh.signed;
      this.remember(token, signed);
    }
    // The claims are judged on every call: time passes, and expectations differ per caller.
    return checkAccessTokenClaims(
      signed.header,
      signed.payload,
      expected,
      this.clock.now(),
      this.clockSkewMs,
    );
  }

  /** A token verified before under this realm's key set. */
  private lookup(token: string, realmName: string): SignedParts | undefined {
    const signed = typeof token === 'string' ? this.signatures.get(token) : undefined;
    return signed?.realmName === realmName ? signed : undefined;
  }

  private async checkSignature(
    token: string,
    keySet: { keys: JWK[] },
    realmName: string,
  ): Promise<{ ok: true; signed: SignedParts } | { ok: false; rejection: AccessTokenVerification }> {
    let verified: Awaited<ReturnType<typeof compactVerify>>;
    try {
      verified = await compactVerify(token, this.resolverFor(keySet), {
        algorithms: [...SIGNING_ALGORITHMS],
      });
    } catch (e) {
      return { ok: false, rejection: reject(rejectionOf(e)) };
    }
    let payload: unknown;
    try {
      // JSON.parse keeps the last duplicate member, which RFC 7519 section 4 permits; the
      // signature is already ours, so no one else chose these bytes.
      payload = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(verified.payload));
    } catch {
      return { ok: false, rejection: reject('malformed') };
    }
    const kid = verified.protectedHeader.kid;
    if (typeof kid !== 'string') return { ok: false, rejection: reject('unknown_key') };
    return { ok: true, signed: { realmName, kid, header: verified.protectedHeader, payload } };
  }

  // Verified signatures are kept (bench/README.md: cache what cannot change): a token's bytes and its
  // key never change, so only the key's presence in the published set is re-checked. Keyed by the
  // token alone (its hash is computed once per string, where a realm-prefixed key was a fresh
  // string to copy and hash on every lookup), with the realm inside. Bounded; the oldest entry
  // goes first.
  private remember(key: string, signed: SignedParts): void {
    if (this.signatures.size >= SIGNATURE_CACHE_SIZE) {
      const oldest = this.signatures.keys().next().value;
      if (oldest !== undefined) this.signatures.delete(oldest);
    }
    this.signatures.set(key, signed);
  }

  private kidsOf(keySet: { keys: JWK[] }): Set<string> {
    let kids = this.publishedKids.get(keySet);
    if (!kids) {
      kids = new Set(keySet.keys.map((k) => k.kid).filter((k): k is string => typeof k === 'string'));
      this.publishedKids.set(keySet, kids);
    }
    return kids;
  }

  /**
   * Verification against the resource the token names (introspection, revocation, exchange):
   * the unsigned `aud` only chooses the expectation, which verify() then checks under the
   * signature. Our tokens carry one audience, or an array of the resource's followed by the
   * realm's UserInfo audience (a grant with openid, docs/tokens.md); the first is the resource.
   * Any other shape is refused.
   */
  async verifyOwnAudience(
    token: string,
    expected: Omit<AccessTokenExpectations, 'audience'>,
  ): Promise<AccessTokenVerification> {
    const hit = this.lookup(token, expected.realmName);
    // A remembered token already names its audience; otherwise read it unverified.
    let aud: unknown;
    if (hit) aud = (hit.payload as { aud?: unknown }).aud;
    else {
      const pre = preflight(token, this.maxTokenBytes);
      if (pre) return pre;
      try {
        aud = decodeJwt(token).aud;
      } catch {
        return reject('malformed');
      }
    }
    if (Array.isArray(aud)) aud = resourceOfArray(aud, expected.issuer);
    if (typeof aud !== 'string' || aud === '') return reject('invalid_claims', 'aud');
    return this.verifyAfterPreflight(token, { ...expected, audience: aud }, hit);
  }

  private resolverFor(keySet: { keys: JWK[] }): JWTVerifyGetKey {
    let resolver = this.resolvers.get(keySet);
    if (!resolver) {
      resolver = createLocalJWKSet(keySet);
      this.resolvers.set(keySet, resolver);
    }
    return resolver;
  }
}

/** The resource audience of an `aud` array of ours, or undefined for any other array. */
function resourceOfArray(aud: unknown[], issuer: string): unknown {
  const [first, ...rest] = aud;
  if (rest.length === 0) return first;
  return rest.length === 1 && rest[0] === userinfoAudienceOf(issuer) && first !== rest[0] ? first : undefined;
}

/** Everything that can be refused before looking up keys: size, shape, algorithm, key id. */
function preflight(token: string, maxTokenBytes: number): AccessTokenVerification | null {
  if (typeof token !== 'string') return reject('malformed');
  if (Buffer.byteLength(token) > maxTokenBytes) return reject('oversized');
  if (!COMPACT_JWS.test(token)) return reject('malformed');
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return reject('malformed');
  }
  // The allowlist comes before any key lookup, so `none` and HS* (key confusion with the public
  // key bytes as an HMAC secret) never reach a verifier.
  if (!isSigningAlgorithm(header.alg)) return reject('alg_not_allowed');
  // Every token we sign names its key; without a kid the key set would have to guess.
  if (!isNonEmptyString(header.kid)) return reject('unknown_key');
  return null;
}

function rejectionOf(e: unknown): AccessTokenRejection {
  if (!(e instanceof errors.JOSEError)) throw e;
  switch (e.code) {
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'bad_signature';
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'unknown_key';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'alg_not_allowed';
    default:
      return 'malformed';
  }
}

/**
 * RFC 9068 section 4 names `at+jwt`; media types compare case-insensitively and a typ without a
 * slash stands for `application/<typ>` (RFC 7515 section 4.1.9), so both spellings are accepted
 * in any ASCII case. We only ever issue `at+jwt`.
 */
export function isAccessTokenTyp(typ: unknown): boolean {
  if (typeof typ !== 'string') return false;
  const folded = typ.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return folded === 'at+jwt' || folded === 'application/at+jwt';
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isNumericDate = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v !== '';

function audienceList(aud: unknown): string[] | null {
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud) && aud.length > 0 && aud.every((a) => typeof a === 'string')) return aud;
  return null;
}

function actorOf(v: unknown, depth = 1): Actor | null {
  if (depth > MAX_ACT_DEPTH || !isRecord(v) || !isNonEmptyString(v.sub)) return null;
  if (v.act === undefined) return { sub: v.sub };
  const inner = actorOf(v.act, depth + 1);
  return inner ? { sub: v.sub, act: inner } : null;
}

function optional<T>(v: unknown, ok: (x: unknown) => x is T): T | null | undefined {
  if (v === undefined) return null;
  return ok(v) ? v : undefined; // undefined: present but of the wrong type
}

/**
 * The checks after the signature, in order: header (again, so this stands alone), type, no confirmation, issuer, audience, times,
 * then the shape of the claims the service relies on. Times compare in milliseconds so a
 * fractional skew setting is honoured exactly.
 */
export function checkAccessTokenClaims(
  header: { alg?: unknown; kid?: unknown; typ?: unknown },
  payload: unknown,
  expected: {
    issuer: string;
    audience: string;
    senderConstrained?: boolean;
    certificateThumbprint?: string | null;
  },
  now: Date,
  clockSkewMs: number,
): AccessTokenVerification {
  const { alg, kid } = header;
  if (!isSigningAlgorithm(alg)) return reject('alg_not_allowed');
  if (!isNonEmptyString(kid)) return reject('unknown_key');
  if (!isAccessTokenTyp(header.typ)) return reject('wrong_typ');
  if (!isRecord(payload)) return reject('malformed');
  // A sender-constrained token presented as a plain bearer is refused whatever its cnf holds,
  // unless it is certificate-bound and the request presented that certificate (RFC 8705); DPoP
  // proof-of-possession verification is a different path.
  const cnf = Object.hasOwn(payload, 'cnf') ? confirmationOf(payload.cnf) : null;
  if (
    Object.hasOwn(payload, 'cnf') &&
    !expected.senderConstrained &&
    !certificateConfirms(payload.cnf, expected.certificateThumbprint)
  )
    return reject('sender_constrained');
  if (cnf === undefined) return reject('invalid_claims', 'cnf');
  if (payload.iss !== expected.issuer) return reject('wrong_issuer');
  const audiences = audienceList(payload.aud);
  if (!audiences) return reject('invalid_claims', 'aud');
  if (!audiences.includes(expected.audience)) return reject('wrong_audience');

  const { exp, iat, nbf } = payload;
  if (!isNumericDate(exp)) return reject('invalid_claims', 'exp');
  if (!isNumericDate(iat)) return reject('invalid_claims', 'iat');
  if (nbf !== undefined && !isNumericDate(nbf)) return reject('invalid_claims', 'nbf');
  const nowMs = now.getTime();
  if (nowMs >= exp * 1000 + clockSkewMs) return reject('expired');
  if (nbf !== undefined && nbf * 1000 > nowMs + clockSkewMs) return reject('not_yet_valid');
  if (iat * 1000 > nowMs + clockSkewMs) return reject('issued_in_future');

  for (const name of ['sub', 'jti', 'client_id'] as const) {
    if (!isNonEmptyString(payload[name])) return reject('invalid_claims', name);
  }
  const scope = optional(payload.scope, (v): v is string => typeof v === 'string');
  const scopes = typeof scope === 'string' ? scope.split(' ') : [];
  if (scope === undefined || !scopes.every(isScopeName)) return reject('invalid_claims', 'scope');
  const authTime = optional(payload.auth_time, isNumericDate);
  if (authTime === undefined) return reject('invalid_claims', 'auth_time');
  const acr = optional(payload.acr, isNonEmptyString);
  if (acr === undefined) return reject('invalid_claims', 'acr');
  const amr = optional(payload.amr, (v): v is string[] => Array.isArray(v) && v.every(isNonEmptyString));
  if (amr === undefined) return reject('invalid_claims', 'amr');
  const sid = optional(payload.sid, isNonEmptyString);
  if (sid === undefined) return reject('invalid_claims', 'sid');
  const orgId = optional(payload.org_id, isNonEmptyString);
  if (orgId === undefined) return reject('invalid_claims', 'org_id');
  const act = payload.act === undefined ? null : actorOf(payload.act);
  if (payload.act !== undefined && !act) return reject('invalid_claims', 'act');
  const grantClientId = optional(payload.grant_client_id, isNonEmptyString);
  if (grantClientId === undefined) return reject('invalid_claims', 'grant_client_id');
  const supportGrantId = optional(payload.support_grant_id, isNonEmptyString);
  if (supportGrantId === undefined) return reject('invalid_claims', 'support_grant_id');

  return {
    ok: true,
    token: {
      kid,
      algorithm: alg,
      issuer: expected.issuer,
      subject: payload.sub as string,
      audiences,
      expiresAt: exp,
      issuedAt: iat,
      notBefore: nbf ?? null,
      tokenId: payload.jti as string,
      clientId: payload.client_id as string,
      scopes,
      authTime,
      acr,
      amr: amr ?? [],
      sessionId: sid,
      orgId,
      act,
      grantClientId,
      supportGrantId,
      cnf,
    },
  };
}

/** One SHA-256 thumbprint under jkt or x5t#S256 (RFC 9449 section 6, RFC 8705 section 3.1). */
function confirmationOf(v: unknown): Confirmation | undefined {
  if (!isRecord(v) || Object.keys(v).length !== 1) return undefined;
  if (isNonEmptyString(v.jkt)) return { jkt: v.jkt };
  const x5t = v['x5t#S256'];
  return isNonEmptyString(x5t) ? { 'x5t#S256': x5t } : undefined;
}
