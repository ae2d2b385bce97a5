// grant_type=urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693; spec doc 1,
// Authentication 10): a confidential client trades a user's access token for one to another
// resource. The result names the user as sub and the calling service as act.sub (nesting any
// earlier actor, decision D6), keeps session and organization, never outlives the subject
// token, and stays inside the grant's exchange_policy. It names the client of the user's grant
// behind the subject token (grant_client_id), so revoking that grant ends it too (doc 2,
// Revocation exposure).

import {
  type AccessTokenClaims,
  type Actor,
  isOpaqueAccessToken,
  resourceAudienceOf,
} from '../../access/access-token.ts';
import { findLiveOpaqueToken } from '../../access/index.ts';
import { checkLiveness } from '../../access/token-liveness.ts';
import { issuerOf } from '../../kernel/audiences.ts';
import { oauthError } from '../../kernel/oauth-error.ts';
import { maybeOne } from '../../platform/db/db.ts';
import { findResourceByAudience, findResourceGrant } from '../../resources/index.ts';
import { allowedScopes, requireOrganization } from '../../resources/resource-target.ts';
import { issueAccessToken } from '../token-issuer.ts';
import {
  ACCESS_TOKEN_TYPE,
  accessTokenResponse,
  exchangeTarget,
  type GrantContext,
  requiredParam,
  type TokenResponse,
} from './grant-context.ts';
import { SUPPORT_HANDOFF_TOKEN_TYPE, supportHandoffGrant } from './support-handoff.ts';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

interface SubjectToken {
  subject: string;
  audience: string;
  clientId: string;
  tokenId: string;
  issuedAt: number;
  expiresAt: number;
  scopes: string[];
  sessionId: string | null;
  authTime: number | null;
  acr: string | null;
  amr: string[];
  orgId: string | null;
  act: Actor | null;
  /** The client of the user's grant the subject token derives from. */
  grantClientId: string | null;
  /** A JWT's signing key (its live check needs it still published); null for opaque tokens. */
  keyId: string | null;
}

export async function tokenExchangeGrant(g: GrantContext): Promise<TokenResponse> {
  const client = g.caller.client;
  if (g.caller.method === 'none')
    throw oauthError.unauthorizedClient('token exchange needs a confidential client');
  const subjectToken = requiredParam(g, 'subject_token');
  const subjectTokenType = requiredParam(g, 'subject_token_type');
  // A support handoff code is redeemed here too (RFC 8693 lets the type choose the meaning).
  if (subjectTokenType === SUPPORT_HANDOFF_TOKEN_TYPE) return supportHandoffGrant(g, subjectToken);
  if (subjectTokenType !== ACCESS_TOKEN_TYPE) {
    throw oauthError.invalidRequest(`subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
  const { audience, requestedScopes } = exchangeTarget(g);

  const subject = await readSubjectToken(g, subjectToken);
  if (!subject) throw oauthError.invalidGrant('the subject token is not active');

  const resource = await findResourceByAudience(g.app.db, g.realm, g.settings.publicOrigin, audience);
  if (resource?.state !== 'active') throw oauthError.invalidTarget('unknown resource');
  const grant = await findResourceGrant(g.app.db, g.realm.id, client.id, resource.id);
  const policy = grant?.exchangePolicy;
  if (!grant || !policy)
    throw oauthError.invalidTarget('the client may not exchange tokens for this resource');
  if (!policy.acceptFromAudiences.includes(subject.audience)) {
    throw oauthError.invalidGrant('the subject token audience is not accepted for this resource');
  }
  const target = { resource, grant };
  // The exchange keeps the subject token's organization (doc 1, Authentication 10); it never adds one.
  requireOrganization(target, subject.orgId);
  const permitted = new Set([...allowedScopes(target)].filter((s) => policy.maxScopes.includes(s)));
  let scopes: string[];
  if (requestedScopes !== null) {
    const refused = requestedScopes.filter((s) => !permitted.has(s));
    if (refused.length > 0) throw oauthError.invalidScope(`scope not allowed: ${refused.join(' ')}`);
    scopes = requestedScopes;
  } else {
    scopes = subject.scopes.filter((s) => permitted.has(s));
  }

  const actorId = await maybeOne<{ id: string }>(
    g.app.db,
    'select id from service_principals where realm_id = $1 and client_row_id = $2',
    [g.realm.id, client.id],
  );
  const act: Actor = { sub: actorId?.id ?? client.client_id, ...(subject.act ? { act: subject.act } : {}) };
  const access = await issueAccessToken(
    g.app.db,
    g.settings,
    g.signer,
    {
      realm: g.realm,
      clientId: client.client_id,
      subject: subject.subject,
      target,
      scopes,
      authentication:
        subject.authTime === null
          ? null
          : {
              sessionId: subject.sessionId,
              authTime: new Date(subject.authTime * 1000),
              amr: subject.amr,
              acr: subject.acr ?? 'basic',
            },
      act,
      // A nested exchange stays bound to the grant of the first one.
      grantClientId: subject.grantClientId,
      orgId: subject.orgId,
      notAfterSeconds: subject.expiresAt,
    },
    g.now,
  );
  if (access.expiresIn < 1) throw oauthError.invalidGrant('the subject token is about to expire');
  return { ...accessTokenResponse(access, scopes), issued_token_type: ACCESS_TOKEN_TYPE };
}

/** The subject token, verified and live, or null. Only user tokens of this realm qualify. */
async function readSubjectToken(g: GrantContext, token: string): Promise<SubjectToken | null> {
  let s: SubjectToken | null;
  if (isOpaqueAccessToken(token)) {
    const stored = await findLiveOpaqueToken(
      g.app.db,
      g.realm.id,
      token,
      g.now,
      g.app.config.tokens.clockSkewMs,
    );
    // Like a JWT (verify-access-token.ts), a stored token with cnf needs a proof of possession that
    // an exchange request cannot carry for it (spec doc 1, Authentication 8).
    if (!stored || stored.claims.support_grant_id !== undefined || stored.claims.cnf !== undefined)
      return null;
    s = fromClaims(stored.claims);
  } else {
    const v = await g.app.tokenVerifier.verifyOwnAudience(token, {
      realmName: g.realm.name,
      issuer: issuerOf(g.settings.publicOrigin, g.realm.name),
    });
    // A support token is for its one resource only; it never buys another (docs/support-access.md).
    if (!v.ok || v.token.supportGrantId !== null) return null;
    const t = v.token;
    s = {
      subject: t.subject,
      audience: t.audiences[0] as string,
      clientId: t.clientId,
      tokenId: t.tokenId,
      issuedAt: t.issuedAt,
      expiresAt: t.expiresAt,
      scopes: t.scopes,
      sessionId: t.sessionId,
      authTime: t.authTime,
      acr: t.acr,
      amr: t.amr,
      orgId: t.orgId,
      act: t.act,
      grantClientId: grantClientOf(t.clientId, t.act, t.grantClientId),
      keyId: t.kid,
    };
  }
  const resource = await findResourceByAudience(g.app.db, g.realm, g.settings.publicOrigin, s.audience);
  if (!resource) return null;
  const live = await checkLiveness(
    g.app.db,
    {
      realmId: g.realm.id,
      subject: s.subject,
      clientId: s.clientId,
      tokenId: s.tokenId,
      issuedAt: s.issuedAt,
      sessionId: s.sessionId,
      audience: s.audience,
      resourceId: resource.id,
      exchanged: s.act !== null,
      grantClientId: s.grantClientId,
      orgId: s.orgId,
      keyId: s.keyId,
    },
    g.now,
  );
  return live.active && live.subjectType === 'user' ? s : null;
}

function fromClaims(c: AccessTokenClaims): SubjectToken {
  return {
    subject: c.sub,
    audience: resourceAudienceOf(c.aud),
    clientId: c.client_id,
    tokenId: c.jti,
    issuedAt: c.iat,
    expiresAt: c.exp,
    scopes: c.scope ? c.scope.split(' ') : [],
    sessionId: c.sid ?? null,
    authTime: c.auth_time ?? null,
    acr: c.acr ?? null,
    amr: c.amr ?? [],
    orgId: c.org_id ?? null,
    act: c.act ?? null,
    grantClientId: grantClientOf(c.client_id, c.act ?? null, c.grant_client_id ?? null),
    keyId: null,
  };
}

/** A user token's grant is its own client's; an exchanged token names it (grant_client_id). */
const grantClientOf = (clientId: string, act: Actor | null, claimed: string | null): string | null =>
  act === null ? clientId : claimed;
