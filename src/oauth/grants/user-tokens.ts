// The token response for a user: an access token for one authorized resource, an ID token when
// openid was granted, and a refresh token when the client may refresh (spec doc 1, Limits:
// offline grants by default 7 d idle and 30 d absolute, the realm policy's tokens members when
// set; transient sessions never get one). Every token of a
// grant in an organization carries its org_id, whatever the resource.

import { withoutProtected } from '../../hooks/index.ts';
import { BUILTIN_USERINFO, userinfoAudience } from '../../kernel/audiences.ts';
import { oauthError } from '../../kernel/oauth-error.ts';
import type { Companion } from '../../platform/db/companions.ts';
import type { Tx } from '../../platform/db/db.ts';
import { currentPolicy } from '../../realms/index.ts';
import {
  narrowScopes,
  requireOrganization,
  resolveTarget,
  type Target,
} from '../../resources/resource-target.ts';
import { addToken, startFamily } from '../../sessions/index.ts';
import { offlineLifetimesOf } from '../../sessions/session-lifetimes.ts';
import { findProfileClaims } from '../../users/index.ts';
import { type Authentication, issueAccessToken, issueIdToken } from '../token-issuer.ts';
import { CLAIM_SCOPES, scopeClaims } from '../tokens/scope-claims.ts';
import {
  accessTokenResponse,
  certificateThumbprint,
  dpopConfirmation,
  type GrantContext,
  type TokenResponse,
} from './grant-context.ts';

export interface UserGrant {
  userId: string;
  grantId: string;
  /** The organization of the grant (the sign-in's); null for a grant outside any. */
  orgId: string | null;
  authentication: Authentication;
  /** Everything the user granted the client (OpenID and resource scopes). */
  scopes: readonly string[];
  /** Resources authorized at the authorization request. */
  resources: readonly string[];
  nonce: string | null;
}

/** The audience of this token request: the named resource, the only authorized one, or UserInfo. */
export function chooseAudience(g: GrantContext, u: UserGrant, requested: string | null): string {
  const userinfo = userinfoAudience(g.settings.publicOrigin, g.realm.name);
  if (requested !== null) {
    if (requested !== userinfo && !u.resources.includes(requested)) {
      throw oauthError.invalidTarget('the resource was not part of the authorization');
    }
    return requested;
  }
  if (u.resources.length > 1) throw oauthError.invalidTarget('several resources were authorized: name one');
  return u.resources[0] ?? userinfo;
}

/**
 * A JWT for an API from a grant that includes openid also serves UserInfo (as Auth0's do): its
 * `aud` adds the realm's UserInfo audience and its `scope` the OpenID scopes UserInfo would get,
 * so a browser library can load the profile with the access token it holds. Null for UserInfo's
 * own token, an opaque token (UserInfo reads JWTs only) and a grant without openid.
 */
async function userinfoShare(
  g: GrantContext,
  tx: Tx,
  u: UserGrant,
  target: Target,
): Promise<{ audience: string; scopes: string[] } | null> {
  if (!u.scopes.includes('openid')) return null;
  if (target.resource.id === BUILTIN_USERINFO || target.resource.tokenFormat !== 'jwt') return null;
  const audience = userinfoAudience(g.settings.publicOrigin, g.realm.name);
  const userinfo = await resolveTarget(
    tx,
    g.realm,
    g.settings.publicOrigin,
    g.caller.client,
    audience,
    'user',
  );
  const scopes = narrowScopes(userinfo, u.scopes);
  return scopes.includes('openid') ? { audience, scopes } : null;
}

/**
 * What the ID token says about the user (decision D21): the claims of the granted profile, email
 * and phone scopes, read now, as UserInfo answers them; null for a client that chose
 * `id_token_claims: minimal` or a grant of none of those scopes.
 */
async function idTokenScopeClaims(
  g: GrantContext,
  tx: Tx,
  u: UserGrant,
): Promise<Record<string, unknown> | null> {
  if (g.caller.client.id_token_claims === 'minimal' || !u.scopes.some((s) => CLAIM_SCOPES.includes(s)))
    return null;
  const user = await findProfileClaims(tx, g.realm.id, u.userId);
  return user ? scopeClaims(u.scopes, user) : null;
}

export async function userTokens(
  g: GrantContext,
  tx: Tx,
  u: UserGrant,
  audience: string,
  opts: { withIdToken: boolean },
): Promise<{ response: Omit<TokenResponse, 'refresh_token'>; jti: string; exp: number }> {
  const target = await resolveTarget(tx, g.realm, g.settings.publicOrigin, g.caller.client, audience, 'user');
  requireOrganization(target, u.orgId);
  const share = await userinfoShare(g, tx, u, target);
  const own = narrowScopes(target, u.scopes);
  // In the grant's order, each scope once.
  const scopes = share ? u.scopes.filter((s) => own.includes(s) || share.scopes.includes(s)) : own;
  const access = await issueAccessToken(
    tx,
    g.settings,
    g.signer,
    {
      realm: g.realm,
      clientId: g.caller.client.client_id,
      subject: u.userId,
      target,
      scopes,
      ...(share ? { extraAudiences: [share.audience] } : {}),
      authentication: u.authentication,
      orgId: u.orgId,
      cnf: dpopConfirmation(g),
      extraClaims: withoutProtected(g.hookClaims?.accessToken),
    },
    g.now,
  );
  const response: Omit<TokenResponse, 'refresh_token'> = accessTokenResponse(access, scopes);
  if (opts.withIdToken && u.scopes.includes('openid')) {
    // A hook's claims first: the scope claims read now, then the protocol claims, override them.
    const added = withoutProtected(g.hookClaims?.idToken);
    const scoped = await idTokenScopeClaims(g, tx, u);
    const claims = Object.keys(added).length > 0 || scoped ? { ...added, ...scoped } : null;
    response.id_token = await issueIdToken(
      g.settings,
      g.signer,
      {
        realm: g.realm,
        clientId: g.caller.client.client_id,
        userId: u.userId,
        authentication: u.authentication,
        nonce: u.nonce,
        orgId: u.orgId,
        accessToken: access.token,
        ...(claims ? { scopeClaims: claims } : {}),
      },
      g.now,
    );
  }
  return { response, jti: access.claims.jti, exp: access.claims.exp };
}

export interface SessionBounds {
  transient: boolean;
  /** The session's own idle length (its idle_seconds). */
  idleSeconds: number;
  absoluteExpiresAt: Date;
}

/**
 * A new refresh family for a code redemption, or null when the client may not refresh or the
 * session is transient. offline_access makes the family outlive the browser session, with the
 * lengths the realm policy's tokens members give at this moment (only then is the policy read);
 * otherwise the family lives and idles as its session does.
 */
export async function startRefreshFamily(
  g: GrantContext,
  tx: Tx,
  u: UserGrant,
  session: SessionBounds,
  along?: (familyId: string) => Companion,
): Promise<{ familyId: string; token: string } | null> {
  if (!g.caller.client.grant_types.includes('refresh_token') || session.transient) return null;
  const offline = u.scopes.includes('offline_access');
  const lengths = offline
    ? offlineLifetimesOf((await currentPolicy(tx, g.realm.id)).document.tokens)
    : { idleMs: session.idleSeconds * 1000, absoluteMs: null };
  return startFamily(
    tx,
    {
      realmId: g.realm.id,
      grantId: u.grantId,
      userId: u.userId,
      clientId: g.caller.client.client_id,
      orgId: u.orgId,
      sessionId: offline ? null : u.authentication.sessionId,
      offline,
      scopes: [...u.scopes],
      resources: [...u.resources],
      authTime: u.authentication.authTime,
      amr: u.authentication.amr,
      acr: u.authentication.acr,
      idleMs: lengths.idleMs,
      absoluteExpiresAt:
        lengths.absoluteMs === null
          ? session.absoluteExpiresAt
          : new Date(g.now.getTime() + lengths.absoluteMs),
      // RFC 9449 section 5: a public client's refresh tokens are bound to its DPoP key; a
      // confidential client's are bound to its authentication already.
      dpopJkt: g.caller.method === 'none' ? (g.dpopJkt ?? null) : null,
      // RFC 8705 section 4: likewise to the client certificate it presented, when it sent no DPoP
      // proof (the access tokens are bound to the DPoP key then, docs/oauth-mtls.md).
      certThumbprint: g.caller.method === 'none' && !g.dpopJkt ? certificateThumbprint(g) : null,
    },
    g.now,
    along,
  );
}

export { addToken };
