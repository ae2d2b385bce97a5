// Access tokens for one resource audience: a signed JWT per RFC 9068, or an opaque reference whose
// claims are stored server-side under a digest. Spec doc 1: API resource definition (audience,
// token_format, access_token_ttl_seconds), Authentication 8 (cnf), Limits (token lifetimes).

import { digestToken } from '../kernel/digest.ts';
import { isScopeName } from '../kernel/scope.ts';
import { epochSeconds, signJwt } from '../keys/jws.ts';
import type { Signer } from '../keys/key-store.ts';
import { randomToken } from '../platform/ids.ts';

export const ACCESS_TOKEN_TYP = 'at+jwt';
export const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 300;
export const MIN_ACCESS_TOKEN_TTL_SECONDS = 30;
export const MAX_ACCESS_TOKEN_TTL_SECONDS = 3600;
export const OPAQUE_ACCESS_TOKEN_PREFIX = 'pa_at_';

const JTI_BYTES = 16; // 128 bits
const OPAQUE_BYTES = 32; // 256 bits
const OPAQUE_SHAPE = /^pa_at_[A-Za-z0-9_-]{43}$/;
const THUMBPRINT_SHAPE = /^[A-Za-z0-9_-]{43}$/; // base64url of a SHA-256 digest

/** DPoP key thumbprint (RFC 9449 section 6) or mTLS certificate thumbprint (RFC 8705 section 3.1). */
export type Confirmation = { jkt: string } | { 'x5t#S256': string };

/** RFC 8693 section 4.1: the newest actor outermost. */
export interface Actor {
  sub: string;
  act?: Actor;
}

export interface AccessTokenInput {
  issuer: string;
  subject: string;
  /** The resource the token is for; always the first audience. */
  audience: string;
  /**
   * Audiences the token also serves, after the resource's: the realm's UserInfo for a user
   * token whose grant includes openid (docs/tokens.md). With any, `aud` is an array.
   */
  extraAudiences?: readonly string[];
  clientId: string;
  scopes: readonly string[];
  /** From accessTokenLifetimeSeconds. */
  lifetimeSeconds: number;
  authTime?: Date | null;
  acr?: string | null;
  amr?: readonly string[] | null;
  sessionId?: string | null;
  orgId?: string | null;
  cnf?: Confirmation | null;
  act?: Actor | null;
  /**
   * After an exchange: the client of the user's grant the subject token came from, so the
   * exchanged token lives only as long as that grant (docs/decisions.md, Tokens).
   */
  grantClientId?: string | null;
  /** Support access: the grant the token acts under (docs/support-access.md). */
  supportGrantId?: string | null;
  /**
   * Claims a before_token_issuance hook added (docs/hooks.md); already cleared of protected
   * names, and written under the service's own claims, so none of these can replace one.
   */
  extraClaims?: Readonly<Record<string, unknown>> | null;
}

/** The claims set, snake_case as it appears in the JWT and in introspection responses. */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  /** The resource's audience, or an array of it followed by extraAudiences. */
  aud: string | string[];
  exp: number;
  iat: number;
  jti: string;
  client_id: string;
  scope?: string;
  auth_time?: number;
  acr?: string;
  amr?: string[];
  sid?: string;
  org_id?: string;
  act?: Actor;
  grant_client_id?: string;
  cnf?: Confirmation;
  support_grant_id?: string;
}

/**
 * The resource's lifetime (default 300 s) capped by tokens.max_access_token_ttl. A value outside
 * 30..3600 cannot come from a validated resource definition, so it is refused rather than clamped:
 * clamping would hide a bad row behind tokens that look fine.
 */
export function accessTokenLifetimeSeconds(
  resourceTtlSeconds: number | null | undefined,
  maxAccessTokenTtlMs: number,
): number {
  const ttl = resourceTtlSeconds ?? DEFAULT_ACCESS_TOKEN_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < MIN_ACCESS_TOKEN_TTL_SECONDS || ttl > MAX_ACCESS_TOKEN_TTL_SECONDS) {
    throw new RangeError(`access_token_ttl_seconds ${ttl} is outside 30..3600`);
  }
  return Math.min(ttl, Math.floor(maxAccessTokenTtlMs / 1000));
}

function confirmation(cnf: Confirmation): Confirmation {
  const members = Object.keys(cnf);
  const value = 'jkt' in cnf ? cnf.jkt : cnf['x5t#S256'];
  if (members.length !== 1 || typeof value !== 'string' || !THUMBPRINT_SHAPE.test(value)) {
    throw new RangeError('cnf must hold exactly one SHA-256 thumbprint (jkt or x5t#S256)');
  }
  return 'jkt' in cnf ? { jkt: value } : { 'x5t#S256': value };
}

/** The claims of a new access token; absent facts are left out rather than written as null. */
export function accessTokenClaims(input: AccessTokenInput, now: Date): AccessTokenClaims {
  if (!Number.isInteger(input.lifetimeSeconds) || input.lifetimeSeconds < 1) {
    throw new RangeError('lifetimeSeconds must be a positive integer');
  }
  if (!input.scopes.every(isScopeName)) throw new RangeError('scopes must be valid scope names');
  const iat = epochSeconds(now);
  const claims: AccessTokenClaims = {
    iss: input.issuer,
    sub: input.subject,
    aud: input.extraAudiences?.length ? [input.audience, ...input.extraAudiences] : input.audience,
    exp: iat + input.lifetimeSeconds,
    iat,
    jti: randomToken(JTI_BYTES),
    client_id: input.clientId,
  };
  if (input.scopes.length > 0) claims.scope = input.scopes.join(' ');
  if (input.authTime) claims.auth_time = epochSeconds(input.authTime);
  if (input.acr) claims.acr = input.acr;
  if (input.amr && input.amr.length > 0) claims.amr = [...input.amr];
  if (input.sessionId) claims.sid = input.sessionId;
  if (input.orgId) claims.org_id = input.orgId;
  if (input.act) claims.act = input.act;
  if (input.grantClientId) claims.grant_client_id = input.grantClientId;
  if (input.supportGrantId) claims.support_grant_id = input.supportGrantId;
  if (input.cnf) claims.cnf = confirmation(input.cnf);
  return claims;
}

export interface SignedAccessToken {
  token: string;
  claims: AccessTokenClaims;
}

export async function signAccessToken(
  input: AccessTokenInput,
  signer: Signer,
  now: Date,
): Promise<SignedAccessToken> {
  const claims = accessTokenClaims(input, now);
  return { token: await signJwt(signer, ACCESS_TOKEN_TYP, { ...input.extraClaims, ...claims }), claims };
}

export interface OpaqueAccessToken {
  /** Returned to the client once; never stored. */
  token: string;
  /** SHA-256 (hex) of the whole token, the lookup key of the stored record. */
  digest: string;
  claims: AccessTokenClaims;
}

export function issueOpaqueAccessToken(input: AccessTokenInput, now: Date): OpaqueAccessToken {
  const token = `${OPAQUE_ACCESS_TOKEN_PREFIX}${randomToken(OPAQUE_BYTES)}`;
  return { token, digest: opaqueAccessTokenDigest(token), claims: accessTokenClaims(input, now) };
}

// Same digest form as authorization codes and session cookies, so every stored secret is looked
// up the same way.
export const opaqueAccessTokenDigest = (token: string): string => digestToken(token);

/** Cheap routing test (introspection, revocation): opaque reference or a JWT to verify. */
/** The resource a token is for: its audience, or the first of its audiences. */
export const resourceAudienceOf = (aud: string | readonly string[]): string =>
  typeof aud === 'string' ? aud : (aud[0] ?? '');

export const isOpaqueAccessToken = (token: string): boolean => OPAQUE_SHAPE.test(token);
