// grant_type=refresh_token (RFC 6749 section 6) with rotation: each use retires the presented
// token. A retired token presented again, or a token presented by another client, revokes the
// whole family (decision D4; spec doc 2 event security.refresh_reuse_detected).

import { recordAudit } from '../../audit/index.ts';
import { addEvent } from '../../events/index.ts';
import { oauthError } from '../../kernel/oauth-error.ts';
import { maybeOne, type Tx } from '../../platform/db/db.ts';
import {
  addToken,
  findFamilyByToken,
  isRefreshTokenShape,
  liveSessionSql,
  lockByToken,
  markRotated,
  type RefreshFamilyRow,
  revokeFamily,
  touchFamily,
} from '../../sessions/index.ts';
import { idleUntil } from '../../sessions/session-lifetimes.ts';
import { mayHoldTokens } from '../../users/account.states.ts';
import { userMayActIn } from '../org-context.ts';
import {
  certificateThumbprint,
  type GrantContext,
  requiredParam,
  resourceParam,
  scopeParam,
  type TokenResponse,
} from './grant-context.ts';
import { isRecoveryRestricted, restrictedAudienceError } from './recovery-restriction.ts';
import { withTokenHooks } from './token-hooks.ts';
import { chooseAudience, type UserGrant, userTokens } from './user-tokens.ts';

interface Liveness {
  user_state: string | null;
  grant_live: boolean;
  session_live: boolean | null;
  session_idle_seconds: number | null;
  session_absolute_expires_at: Date | null;
  session_restricted: boolean | null;
}

export async function refreshTokenGrant(base: GrantContext): Promise<TokenResponse> {
  const presented = requiredParam(base, 'refresh_token');
  const requestedScopes = scopeParam(base);
  const requested = resourceParam(base);
  if (!isRefreshTokenShape(presented)) throw oauthError.invalidGrant('unknown refresh token');
  const g = await withTokenHooks(base, 'refresh_token', async () => {
    const f = await findFamilyByToken(base.app.db, base.realm.id, presented);
    if (!f || f.revoked_at !== null || f.client_id !== base.caller.client.client_id) return null;
    return { user_id: f.user_id, scopes: requestedScopes ?? f.scopes, org_id: f.org_id };
  });

  const outcome = await g.app.db.tx(async (tx) => {
    const found = await lockByToken(tx, g.realm.id, presented);
    if (!found) return { error: 'unknown refresh token' } as const;
    const { family, rotatedAt } = found;
    if (family.revoked_at !== null) return { error: 'refresh token revoked' } as const;
    if (family.client_id !== g.caller.client.client_id) {
      await revokeStolen(g, tx, family, 'presented_by_other_client');
      return { error: 'unknown refresh token' } as const;
    }
    if (rotatedAt !== null) {
      await revokeStolen(g, tx, family, 'reuse');
      return { error: 'refresh token already used' } as const;
    }
    // RFC 9449 section 5: a family bound to a DPoP key refreshes only with a proof of that key;
    // refused before anything is spent.
    if (family.dpop_jkt !== null && family.dpop_jkt !== (g.dpopJkt ?? null)) {
      return { error: 'the refresh token is bound to another DPoP key' } as const;
    }
    // RFC 8705 section 4: a family bound to a client certificate refreshes only with it.
    if (family.cert_thumbprint !== null && family.cert_thumbprint !== certificateThumbprint(g)) {
      return { error: 'the refresh token is bound to another client certificate' } as const;
    }
    const nowMs = g.now.getTime();
    if (
      new Date(family.idle_expires_at).getTime() <= nowMs ||
      new Date(family.absolute_expires_at).getTime() <= nowMs
    ) {
      return { error: 'refresh token expired' } as const;
    }
    const live = await maybeOne<Liveness>(
      tx,
      `select u.state as user_state,
         exists (select 1 from oauth_grants gr where gr.realm_id = $1 and gr.id = $3 and gr.revoked_at is null) as grant_live,
         (select ${liveSessionSql('s', '$5')}
            from sessions s where s.realm_id = $1 and s.id = $4) as session_live,
         (select s.idle_seconds from sessions s where s.realm_id = $1 and s.id = $4) as session_idle_seconds,
         (select s.absolute_expires_at from sessions s where s.realm_id = $1 and s.id = $4)
           as session_absolute_expires_at,
         (select s.recovery_restricted from sessions s where s.realm_id = $1 and s.id = $4) as session_restricted
       from users u where u.realm_id = $1 and u.id = $2`,
      [g.realm.id, family.user_id, family.grant_id, family.session_id, g.now],
    );
    if (!live || !mayHoldTokens(live.user_state) || !live.grant_live) {
      return { error: 'the grant is no longer active' } as const;
    }
    if (family.session_id !== null && live.session_live !== true)
      return { error: 'the session has ended' } as const;
    // Doc 2, Revocation exposure: the rotation re-checks the organization and the membership.
    if (family.org_id !== null && !(await userMayActIn(tx, g.realm.id, family.org_id, family.user_id, g.now)))
      return { error: 'the organization membership is not active' } as const;
    if (requestedScopes !== null && !requestedScopes.every((s) => family.scopes.includes(s))) {
      return { scopeError: 'a scope beyond the original grant was requested' } as const;
    }

    const user: UserGrant = {
      userId: family.user_id,
      grantId: family.grant_id,
      orgId: family.org_id,
      authentication: {
        sessionId: family.session_id,
        authTime: new Date(family.auth_time),
        amr: family.amr,
        acr: family.acr,
      },
      scopes: requestedScopes ?? family.scopes,
      resources: family.resources,
      // OIDC Core 12.2: a refreshed ID token carries no nonce.
      nonce: null,
    };
    const audience = chooseAudience(g, user, requested);
    const restricted = isRecoveryRestricted(live.session_restricted, live.user_state);
    const refused = restrictedAudienceError(g, audience, restricted);
    if (refused) return { error: refused } as const;
    const tokens = await userTokens(g, tx, user, audience, { withIdToken: true });
    await markRotated(tx, g.realm.id, presented, g.now);
    const next = await addToken(tx, g.realm.id, family.id, g.now);
    // Each family and session idles by the length it started with (docs/signin.md "Session
    // lifetimes"). A refresh through a session-bound family is activity of the SSO session too
    // (as in Keycloak): its idle expiry moves on, never past its absolute one. An offline family
    // outlives its session and leaves it alone.
    const session =
      family.session_id !== null &&
      live.session_idle_seconds !== null &&
      live.session_absolute_expires_at !== null
        ? {
            id: family.session_id,
            idleUntil: idleUntil(
              g.now,
              live.session_idle_seconds,
              new Date(live.session_absolute_expires_at),
            ),
          }
        : null;
    const familyIdleUntil = idleUntil(g.now, family.idle_seconds, new Date(family.absolute_expires_at));
    await touchFamily(tx, g.realm.id, family.id, familyIdleUntil, session, g.now);
    return { tokens: { ...tokens.response, refresh_token: next } } as const;
  });
  if ('error' in outcome) throw oauthError.invalidGrant(outcome.error);
  if ('scopeError' in outcome) throw oauthError.invalidScope(outcome.scopeError);
  return outcome.tokens;
}

async function revokeStolen(g: GrantContext, tx: Tx, family: RefreshFamilyRow, why: string): Promise<void> {
  await revokeFamily(tx, g.realm.id, family.id, why, g.now);
  await recordAudit(
    tx,
    {
      realmId: g.realm.id,
      type: 'token.refresh_reuse_detected',
      category: 'security',
      outcome: 'failure',
      actor: { type: 'client', id: g.caller.client.client_id },
      subject: { type: 'user', id: family.user_id },
      correlationId: g.correlationId,
      signal: 'refresh_reuse',
      reason: why,
      ...(family.org_id ? { orgId: family.org_id } : {}),
      data: { family_id: family.id, client_id: family.client_id },
    },
    g.now,
  );
  await addEvent(tx, {
    realmId: g.realm.id,
    type: 'security.refresh_reuse_detected',
    occurredAt: g.now,
    correlationId: g.correlationId,
    // Doc 2 event catalog: org_id when the grant is organization-bound.
    ...(family.org_id ? { orgId: family.org_id } : {}),
    data: { subject_id: family.user_id, family_id: family.id },
  });
}
