// grant_type=authorization_code (RFC 6749 section 4.1.3, RFC 7636 section 4.5): the code is
// single use and bound to the client, redirect URI and PKCE challenge. A replayed code revokes
// what its first redemption issued (decision D3).

import { recordAudit } from '../../audit/index.ts';
import { digestToken } from '../../kernel/digest.ts';
import { oauthError } from '../../kernel/oauth-error.ts';
import { isCodeVerifier, verifyS256 } from '../../kernel/pkce.ts';
import type { Companion } from '../../platform/db/companions.ts';
import { jsonColumn, maybeOne, type Tx } from '../../platform/db/db.ts';
import { type GrantRow, liveGrantJsonSql, liveSessionSql, revokeFamily } from '../../sessions/index.ts';
import { mayHoldTokens } from '../../users/account.states.ts';
import { userMayActIn } from '../org-context.ts';
import {
  type GrantContext,
  param,
  requiredParam,
  resourceParam,
  type TokenResponse,
} from './grant-context.ts';
import { isRecoveryRestricted, restrictedAudienceError } from './recovery-restriction.ts';
import { type TokenSubject, withTokenHooks } from './token-hooks.ts';
import { chooseAudience, startRefreshFamily, type UserGrant, userTokens } from './user-tokens.ts';

interface CodeRow {
  code_digest: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  nonce: string | null;
  scopes: string[];
  resources: string[];
  user_id: string;
  session_id: string;
  auth_time: Date;
  amr: string[];
  acr: string;
  org_id: string | null;
  expires_at: Date;
  consumed_at: Date | null;
  issued: Issued | null;
}

/** What a redemption issued, for revocation on replay. */
interface Issued {
  jti: string;
  exp: number;
  family_id: string | null;
}

interface SessionFacts {
  live: boolean;
  transient: boolean;
  idle_seconds: number;
  absolute_expires_at: Date;
  user_state: string;
  recovery_restricted: boolean;
}

/**
 * The code, locked, with its session's facts and the live grant it was issued under, in one
 * statement (issue 37): the two are read after the code's checks pass, and nearly every code passes.
 */
const CODE_SQL = `select c.*,
    (select json_build_object('live', (${liveSessionSql('s', '$3')}), 'transient', s.transient,
              'idle_seconds', s.idle_seconds, 'absolute_expires_at', s.absolute_expires_at,
              'user_state', u.state, 'recovery_restricted', s.recovery_restricted)
       from sessions s join users u on u.realm_id = s.realm_id and u.id = s.user_id
      where s.realm_id = c.realm_id and s.id = c.session_id) as session_facts,
    ${liveGrantJsonSql('c.realm_id', 'c.user_id', 'c.client_id', 'c.org_id')} as live_grant
   from authorization_codes c where c.realm_id = $1 and c.code_digest = $2 for update of c`;

export async function authorizationCodeGrant(base: GrantContext): Promise<TokenResponse> {
  const code = requiredParam(base, 'code');
  const redirectUri = requiredParam(base, 'redirect_uri');
  const verifier = param(base, 'code_verifier');
  if (verifier === null) throw oauthError.invalidRequest('code_verifier is required');
  const requested = resourceParam(base);
  // An unspent code of this client names the user; anything else is refused below, hook or not.
  const g = await withTokenHooks(base, 'authorization_code', () =>
    maybeOne<TokenSubject>(
      base.app.db,
      `select user_id, scopes, org_id from authorization_codes
        where realm_id = $1 and code_digest = $2 and client_id = $3 and consumed_at is null`,
      [base.realm.id, digestToken(code), base.caller.client.client_id],
    ),
  );

  const outcome = await g.app.db.tx(async (tx) => {
    const row = await maybeOne<CodeRow & { session_facts: unknown; live_grant: unknown }>(tx, CODE_SQL, [
      g.realm.id,
      digestToken(code),
      g.now,
    ]);
    // A code of another client is not this client's to spend or to revoke.
    if (!row || row.client_id !== g.caller.client.client_id) return { error: 'unknown code' } as const;
    if (row.consumed_at !== null) {
      await revokeIssued(g, tx, row);
      return { error: 'code already used' } as const;
    }
    if (new Date(row.expires_at).getTime() <= g.now.getTime()) return { error: 'code expired' } as const;
    if (row.redirect_uri !== redirectUri) return { error: 'redirect_uri does not match' } as const;
    // RFC 7636 section 4.6: a verifier of the wrong shape cannot match either, so it is invalid_grant
    // like a wrong one, judged here so that a replayed code still revokes; the code stays unspent.
    if (!isCodeVerifier(verifier))
      return { error: 'code_verifier must be 43 to 128 unreserved characters' } as const;
    if (!verifyS256(verifier, row.code_challenge)) return { error: 'code_verifier does not match' } as const;

    const session = jsonColumn<SessionFacts | null>(row.session_facts);
    if (!session?.live || !mayHoldTokens(session.user_state))
      return { error: 'the sign-in has ended' } as const;
    const grant = jsonColumn<GrantRow | null>(row.live_grant);
    if (!grant) return { error: 'the grant was revoked' } as const;
    if (row.org_id !== null && !(await userMayActIn(tx, g.realm.id, row.org_id, row.user_id, g.now)))
      return { error: 'the organization membership is not active' } as const;

    const user: UserGrant = {
      userId: row.user_id,
      grantId: grant.id,
      orgId: row.org_id,
      authentication: {
        sessionId: row.session_id,
        authTime: new Date(row.auth_time),
        amr: row.amr,
        acr: row.acr,
      },
      scopes: row.scopes,
      resources: row.resources,
      nonce: row.nonce,
    };
    const audience = chooseAudience(g, user, requested);
    const restricted = isRecoveryRestricted(session.recovery_restricted, session.user_state);
    const refused = restrictedAudienceError(g, audience, restricted);
    if (refused) return { error: refused } as const;
    const tokens = await userTokens(g, tx, user, audience, { withIdToken: true });
    // The code is spent by the statement that starts the refresh family, when there is one.
    const consume = (familyId: string | null): Companion => {
      const issued: Issued = { jti: tokens.jti, exp: tokens.exp, family_id: familyId };
      return {
        sql: 'update authorization_codes set consumed_at = $3, issued = $4 where realm_id = $1 and code_digest = $2',
        params: [g.realm.id, row.code_digest, g.now, JSON.stringify(issued)],
      };
    };
    const family = await startRefreshFamily(
      g,
      tx,
      user,
      {
        transient: session.transient,
        idleSeconds: session.idle_seconds,
        absoluteExpiresAt: new Date(session.absolute_expires_at),
      },
      consume,
    );
    if (!family) {
      const spent = consume(null);
      await tx.query(spent.sql, spent.params);
    }
    return { tokens: { ...tokens.response, ...(family ? { refresh_token: family.token } : {}) } } as const;
  });
  if ('error' in outcome) throw oauthError.invalidGrant(outcome.error);
  return outcome.tokens;
}

async function revokeIssued(g: GrantContext, tx: Tx, row: CodeRow): Promise<void> {
  const issued = row.issued;
  if (issued) {
    if (issued.jti) {
      await tx.query(
        `insert into token_revocations (realm_id, jti, reason, expires_at, created_at)
         values ($1, $2, 'code_replayed', $3, $4) on conflict do nothing`,
        [g.realm.id, issued.jti, new Date(issued.exp * 1000), g.now],
      );
      await tx.query(
        'update opaque_access_tokens set revoked_at = $3 where realm_id = $1 and jti = $2 and revoked_at is null',
        [g.realm.id, issued.jti, g.now],
      );
    }
    if (issued.family_id) await revokeFamily(tx, g.realm.id, issued.family_id, 'code_replayed', g.now);
  }
  await recordAudit(
    tx,
    {
      realmId: g.realm.id,
      type: 'token.code_replayed',
      category: 'security',
      outcome: 'failure',
      actor: { type: 'client', id: g.caller.client.client_id },
      subject: { type: 'user', id: row.user_id },
      correlationId: g.correlationId,
      data: { client_id: row.client_id, revoked_family: issued?.family_id ?? null },
    },
    g.now,
  );
}
