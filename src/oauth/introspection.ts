// Token introspection for resource servers (RFC 7662; spec doc 1, endpoint table, introspection
// row; doc 2, Authentication 7 and Revocation exposure). A JWT is verified offline, then one SQL
// statement runs every live check together with the introspector check; an opaque token costs
// one more statement (its stored claims). Whatever fails, the answer is the same {active: false}.

import { type AccessTokenClaims, isOpaqueAccessToken, resourceAudienceOf } from '../access/access-token.ts';
import { findLiveOpaqueToken } from '../access/index.ts';
import { isBuiltinAudience, verifyResourceToken } from '../access/resource-token.ts';
import { checkLiveness, type Liveness, type TokenFacts } from '../access/token-liveness.ts';
import { withoutProtected } from '../hooks/index.ts';
import { issuerOf } from '../kernel/audiences.ts';
import type { RealmRef } from '../resources/index.ts';
import { isRefreshTokenShape } from '../sessions/index.ts';
import type { OAuthDeps } from './oauth.deps.ts';

export interface ActiveIntrospection {
  active: true;
  scope?: string;
  client_id: string;
  sub: string;
  /** As in the token: the resource's audience, or an array with it first (docs/tokens.md). */
  aud: string | string[];
  iss: string;
  exp: number;
  iat: number;
  nbf?: number;
  jti: string;
  /** DPoP for a key-bound token (RFC 9449 section 6.2), which also shows its cnf. */
  token_type: 'Bearer' | 'DPoP';
  cnf?: AccessTokenClaims['cnf'];
  sid?: string;
  auth_time?: number;
  acr?: string;
  amr?: string[];
  org_id?: string;
  act?: AccessTokenClaims['act'];
  /** Support access: the grant the token acts under; act.sub is the support user. */
  support_grant_id?: string;
  /** The subject's authorization version now, not when the token was issued. */
  authz_version?: number;
}

/** RFC 7662 section 2.2: an inactive token gets nothing but the flag, whatever the reason. */
export type IntrospectionResponse = Readonly<{ active: false }> | ActiveIntrospection;

const INACTIVE: Readonly<{ active: false }> = Object.freeze({ active: false });

/** A token whose signature (or stored record) checked out, before the live checks. */
export interface Candidate {
  claims: AccessTokenClaims & { nbf?: number };
  /** null: the registered resource of claims.aud, resolved by the live-check statement. */
  resourceId: string | null;
  /** The kid of a JWT, whose key must still be published; null for an opaque token. */
  keyId: string | null;
}

/** The facts the live checks need about a candidate token. */
export function livenessFacts(realm: RealmRef, candidate: Candidate): TokenFacts {
  const c = candidate.claims;
  return {
    realmId: realm.id,
    subject: c.sub,
    clientId: c.client_id,
    tokenId: c.jti,
    issuedAt: c.iat,
    sessionId: c.sid ?? null,
    audience: resourceAudienceOf(c.aud),
    resourceId: candidate.resourceId,
    exchanged: c.act !== undefined,
    grantClientId: c.grant_client_id ?? null,
    // Doc 2, Revocation exposure: organization and membership active when org_id is present.
    orgId: c.org_id ?? null,
    // A support token is live only with its grant (docs/support-access.md).
    supportGrantId: c.support_grant_id ?? null,
    // Doc 2, Revocation exposure: signature and key. The key set each process caches for five
    // seconds may still hold a key an emergency rotation compromised; its state is read live.
    keyId: candidate.keyId,
  };
}

/** The answer once the live checks (with the introspector check) have run. */
export function judge(candidate: Candidate, live: Liveness): IntrospectionResponse {
  if (!live.introspectorAllowed || !live.active) return INACTIVE;
  return presentActive(candidate.claims, live.authzVersion);
}

/**
 * The introspection answer for `token` as seen by the client with row id `introspectorRowId`.
 * Refresh tokens are never shown to resource servers; tokens of the built-in audiences have no
 * introspectors (the service checks its own APIs itself).
 */
export async function introspectToken(
  app: OAuthDeps,
  realm: RealmRef,
  introspectorRowId: string,
  token: string,
  now: Date,
): Promise<IntrospectionResponse> {
  const candidate = await candidateFor(app, realm, token, now);
  if (!candidate) return INACTIVE;
  const live = await checkLiveness(app.db, { ...livenessFacts(realm, candidate), introspectorRowId }, now);
  return judge(candidate, live);
}

/**
 * A token whose signature (JWT) or stored record (opaque) checks out and that introspection may
 * show at all; null otherwise. Refresh tokens never qualify.
 */
export async function candidateFor(
  app: OAuthDeps,
  realm: RealmRef,
  token: string,
  now: Date,
): Promise<Candidate | null> {
  // Sizes need no check here: the opaque and refresh shapes have a fixed length, and the JWT
  // verifier refuses anything over limits.max_token_bytes before decoding it.
  if (isRefreshTokenShape(token)) return null;
  return isOpaqueAccessToken(token)
    ? await opaqueCandidate(app, realm, token, now)
    : await jwtCandidate(app, realm, token);
}

export const INACTIVE_ANSWER = INACTIVE;

async function jwtCandidate(app: OAuthDeps, realm: RealmRef, token: string): Promise<Candidate | null> {
  const v = await verifyResourceToken(app, realm, token, { senderConstrained: true });
  if (!v) return null;
  const { token: t, audience: aud } = v;
  const claims: Candidate['claims'] = {
    iss: t.issuer,
    sub: t.subject,
    // As issued: the resource's audience (`aud`), first of an array when the token also serves UserInfo.
    aud: t.audiences.length > 1 ? t.audiences : aud,
    exp: t.expiresAt,
    iat: t.issuedAt,
    jti: t.tokenId,
    client_id: t.clientId,
  };
  if (t.scopes.length > 0) claims.scope = t.scopes.join(' ');
  // Ours carry no nbf; one in a token signed with our key is passed on.
  if (t.notBefore !== null) claims.nbf = t.notBefore;
  if (t.authTime !== null) claims.auth_time = t.authTime;
  if (t.acr !== null) claims.acr = t.acr;
  if (t.amr.length > 0) claims.amr = t.amr;
  if (t.sessionId !== null) claims.sid = t.sessionId;
  if (t.orgId !== null) claims.org_id = t.orgId;
  if (t.act !== null) claims.act = t.act;
  // Kept for the live check only; the introspection answer does not show it.
  if (t.grantClientId !== null) claims.grant_client_id = t.grantClientId;
  if (t.supportGrantId !== null) claims.support_grant_id = t.supportGrantId;
  if (t.cnf !== null) claims.cnf = t.cnf;
  return { claims, resourceId: null, keyId: t.kid };
}

async function opaqueCandidate(
  app: OAuthDeps,
  realm: RealmRef,
  token: string,
  now: Date,
): Promise<Candidate | null> {
  const stored = await findLiveOpaqueToken(app.db, realm.id, token, now, app.config.tokens.clockSkewMs);
  if (!stored) return null;
  const { claims } = stored;
  // A record written under another public origin names an issuer that no longer exists. A
  // sender-constrained one is shown with its cnf: the resource server checks the proof.
  if (claims.iss !== issuerOf(app.config.server.publicOrigin, realm.name)) return null;
  if (isBuiltinAudience(app, realm, resourceAudienceOf(claims.aud))) return null;
  return { claims, resourceId: stored.resourceId, keyId: null };
}

const SHOWN: ReadonlySet<string> = new Set(['active', 'token_type', 'authz_version']);

/** The members of stored claims that are not the service's own. */
function hookClaimsOf(c: Candidate['claims']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c)) if (!SHOWN.has(k)) out[k] = v;
  return out;
}

function presentActive(c: Candidate['claims'], authzVersion: number | null): ActiveIntrospection {
  const out: ActiveIntrospection = {
    active: true,
    client_id: c.client_id,
    sub: c.sub,
    aud: c.aud,
    iss: c.iss,
    exp: c.exp,
    iat: c.iat,
    jti: c.jti,
    token_type: c.cnf && 'jkt' in c.cnf ? 'DPoP' : 'Bearer',
  };
  if (c.cnf !== undefined) out.cnf = c.cnf;
  if (c.scope !== undefined) out.scope = c.scope;
  if (c.nbf !== undefined) out.nbf = c.nbf;
  if (c.sid !== undefined) out.sid = c.sid;
  if (c.auth_time !== undefined) out.auth_time = c.auth_time;
  if (c.acr !== undefined) out.acr = c.acr;
  if (c.amr !== undefined) out.amr = c.amr;
  if (c.org_id !== undefined) out.org_id = c.org_id;
  if (c.act !== undefined) out.act = c.act;
  if (c.support_grant_id !== undefined) out.support_grant_id = c.support_grant_id;
  if (authzVersion !== null) out.authz_version = authzVersion;
  // An opaque token's stored claims also hold what a token hook added (docs/hooks.md); the members
  // above, and every claim the service sets, are never taken from them.
  return { ...withoutProtected(hookClaimsOf(c)), ...out };
}
