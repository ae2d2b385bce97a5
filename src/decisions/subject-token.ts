// The subject token of a decision (docs/authorization.md, evaluation step 1): one of this realm's
// own access tokens for a registered resource, a JWT verified offline (signatures are cached by
// the verifier) or an opaque pa_at_ token found by its digest. Built-in audiences (admin, account,
// userinfo) are never subjects: a resource server never receives them. Sender-constrained tokens
// are refused, as introspection refuses them: the decision API cannot see the proof.

import {
  type AccessTokenClaims,
  isOpaqueAccessToken,
  opaqueAccessTokenDigest,
  resourceAudienceOf,
} from '../access/access-token.ts';
import { isBuiltinAudience, verifyResourceToken } from '../access/resource-token.ts';
import type { TokenFacts } from '../access/token-liveness.ts';
import { issuerOf } from '../kernel/audiences.ts';
import { many } from '../platform/db/db.ts';
import type { DecisionApiDeps } from './decisions.deps.ts';

export interface SubjectToken {
  subject: string;
  clientId: string;
  tokenId: string;
  issuedAt: number;
  expiresAt: number;
  sessionId: string | null;
  audience: string;
  /** res_… for opaque tokens (stored); null: resolved from the audience by the live check. */
  resourceId: string | null;
  exchanged: boolean;
  /** After an exchange: the client of the user's grant it derives from (grant_client_id). */
  grantClientId: string | null;
  scopes: string[];
  acr: string | null;
  amr: string[];
  authTime: number | null;
  orgId: string | null;
  /** A support token's grant (docs/support-access.md); its live check and rules depend on it. */
  supportGrantId: string | null;
  /** A JWT's signing key (its live check needs it still published); null for opaque tokens. */
  keyId: string | null;
}

interface RealmRef {
  id: string;
  name: string;
}

/** The verified token, or null when it is not one of ours for a registered resource. */
export async function resolveSubjectToken(
  app: DecisionApiDeps,
  realm: RealmRef,
  token: string,
  now: Date,
): Promise<SubjectToken | null> {
  return (await resolveSubjectTokens(app, realm, [token], now))[0] ?? null;
}

/**
 * resolveSubjectToken for several tokens, in order: the opaque ones' stored claims come in one
 * statement, so a batch costs one lookup however many opaque tokens it holds.
 */
export async function resolveSubjectTokens(
  app: DecisionApiDeps,
  realm: RealmRef,
  tokens: readonly string[],
  now: Date,
): Promise<(SubjectToken | null)[]> {
  const opaqueTokens = tokens.filter(isOpaqueAccessToken);
  const stored = opaqueTokens.length > 0 ? await storedOpaqueTokens(app, realm.id, opaqueTokens, now) : null;
  return Promise.all(
    tokens.map((t) =>
      isOpaqueAccessToken(t) ? opaque(app, realm, stored?.get(t) ?? null) : jwt(app, realm, t),
    ),
  );
}

async function jwt(app: DecisionApiDeps, realm: RealmRef, token: string): Promise<SubjectToken | null> {
  const v = await verifyResourceToken(app, realm, token);
  if (!v) return null;
  const { token: t, audience: aud } = v;
  return {
    subject: t.subject,
    clientId: t.clientId,
    tokenId: t.tokenId,
    issuedAt: t.issuedAt,
    expiresAt: t.expiresAt,
    sessionId: t.sessionId,
    audience: aud,
    resourceId: null,
    exchanged: t.act !== null,
    grantClientId: t.grantClientId,
    scopes: t.scopes,
    acr: t.acr,
    amr: t.amr,
    authTime: t.authTime,
    orgId: t.orgId,
    supportGrantId: t.supportGrantId,
    keyId: t.kid,
  };
}

/** The stored opaque tokens among these that are neither revoked nor expired, by token. */
async function storedOpaqueTokens(
  app: DecisionApiDeps,
  realmId: string,
  tokens: readonly string[],
  now: Date,
): Promise<Map<string, StoredOpaque>> {
  const byDigest = new Map(tokens.map((t) => [opaqueAccessTokenDigest(t), t]));
  const rows = await many<{
    token_digest: string;
    resource_id: string;
    claims: AccessTokenClaims | string;
    expires_at: Date;
  }>(
    app.db,
    `select token_digest, resource_id, claims, expires_at from opaque_access_tokens
      where realm_id = $1 and token_digest = any ($2::text[]) and revoked_at is null`,
    [realmId, [...byDigest.keys()]],
  );
  const out = new Map<string, StoredOpaque>();
  for (const row of rows) {
    const token = byDigest.get(row.token_digest);
    // Expiry is judged with the clock tolerance JWTs get, as findLiveOpaqueToken does.
    if (!token || now.getTime() >= new Date(row.expires_at).getTime() + app.config.tokens.clockSkewMs)
      continue;
    const claims =
      typeof row.claims === 'string' ? (JSON.parse(row.claims) as AccessTokenClaims) : row.claims;
    out.set(token, { resourceId: row.resource_id, claims });
  }
  return out;
}

interface StoredOpaque {
  resourceId: string;
  claims: AccessTokenClaims;
}

function opaque(app: DecisionApiDeps, realm: RealmRef, stored: StoredOpaque | null): SubjectToken | null {
  if (!stored) return null;
  const c = stored.claims;
  if (c.iss !== issuerOf(app.config.server.publicOrigin, realm.name) || c.cnf !== undefined) return null;
  const audience = resourceAudienceOf(c.aud);
  if (isBuiltinAudience(app, realm, audience)) return null;
  return {
    subject: c.sub,
    clientId: c.client_id,
    tokenId: c.jti,
    issuedAt: c.iat,
    expiresAt: c.exp,
    sessionId: c.sid ?? null,
    audience,
    resourceId: stored.resourceId,
    exchanged: c.act !== undefined,
    grantClientId: c.grant_client_id ?? null,
    scopes: c.scope ? c.scope.split(' ') : [],
    acr: c.acr ?? null,
    amr: c.amr ?? [],
    authTime: c.auth_time ?? null,
    orgId: c.org_id ?? null,
    supportGrantId: c.support_grant_id ?? null,
    keyId: null,
  };
}

/** The live-check facts of a subject token, without what a decision adds. */
export const livenessFactsOf = (realmId: string, t: SubjectToken): TokenFacts => ({
  realmId,
  subject: t.subject,
  clientId: t.clientId,
  tokenId: t.tokenId,
  issuedAt: t.issuedAt,
  sessionId: t.sessionId,
  audience: t.audience,
  resourceId: t.resourceId,
  exchanged: t.exchanged,
  grantClientId: t.grantClientId,
  orgId: t.orgId,
  supportGrantId: t.supportGrantId,
  keyId: t.keyId,
});
