// Completion (spec doc 1, sign-in state table, first row): the SSO session, a one-time
// authorization code bound to client, redirect URI, PKCE challenge, nonce, scopes, resources,
// session and organization, and the redirect that carries it.

import { recorder } from '../audit/index.ts';
import { digestToken } from '../kernel/digest.ts';
import type { Companion } from '../platform/db/companions.ts';
import type { Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { randomToken } from '../platform/ids.ts';
import type { RealmPolicy, RealmRow } from '../realms/index.ts';
import {
  grantUpsert,
  type NewSession,
  newTokensLiveFrom,
  reuseSession,
  type SessionRow,
  sessionInsert,
  tokensLiveFromRevocation,
} from '../sessions/index.ts';
import { lifetimesFor, sessionPolicyOf } from '../sessions/session-lifetimes.ts';
import { codeInsert } from './authorization-codes.repo.ts';
import { authorizationRedirect } from './authorization-response.ts';
import { approveDevice } from './device-decision.ts';
import { mfaDone } from './next-actions.ts';
import type { SigninDeps } from './signin.deps.ts';
import { phishingResistantProved, type SigninTx } from './transaction.ts';
import { complete } from './transitions.ts';

export interface Completion {
  tx: SigninTx;
  session: SessionRow;
  /** The new pa_sid value for browser transactions. */
  sessionCookie: string | null;
  /**
   * When the code's tokens will be live: later than now after an account-wide revocation in this
   * second (a password reset in this very step). The caller answers no earlier, once the database
   * transaction is over, so no token is issued in the revoked second. An SSO session reused at the
   * authorization endpoint never meets this: such a revocation would have ended it.
   */
  tokensLiveFrom: Date;
}

export const issuerOf = (app: SigninDeps, realm: RealmRow): string =>
  `${app.config.server.publicOrigin}/realms/${realm.name}`;

async function redirectFor(
  app: SigninDeps,
  q: Tx,
  realm: RealmRow,
  t: SigninTx,
  params: Record<string, string>,
  now: Date,
) {
  const signer = t.responseMode === 'query' ? null : await app.keyStore.activeSigner(realm.id, q);
  if (t.responseMode !== 'query' && !signer) {
    app.metrics.signingFailures.inc({ reason: 'no_active_key' });
    throw problem.unavailable('the realm has no usable signing key');
  }
  return authorizationRedirect(
    {
      redirectUri: t.redirectUri,
      responseMode: t.responseMode,
      clientId: t.clientId,
      state: t.state,
      issuer: issuerOf(app, realm),
    },
    params,
    signer,
    now,
  );
}

/** The error redirect of a cancelled or failed transaction. */
export const errorRedirect = (app: SigninDeps, q: Tx, realm: RealmRow, t: SigninTx, now: Date) =>
  redirectFor(app, q, realm, t, { error: 'access_denied' }, now);

/**
 * `t.organizationId` is the organization signed in to (organization-rules.ts withOrganization);
 * `policy` is the realm policy the step already read (a new session's lifetimes come from it).
 */
export async function completeTransaction(
  app: SigninDeps,
  q: Tx,
  realm: RealmRow,
  policy: RealmPolicy,
  t: SigninTx,
  userState: string,
  now: Date,
  correlationId: string,
): Promise<Completion> {
  if (!t.userId) throw new Error('completion without an account');
  const mfa = mfaDone(t);
  // A browser that arrived with a live SSO session keeps it: no second session, no new cookie.
  const reused = t.sessionId
    ? await reuseSession(
        q,
        realm.id,
        t.sessionId,
        t.userId,
        t.completedFactors,
        mfa,
        phishingResistantProved(t),
        now,
      )
    : null;
  const sessionCookie = t.mode === 'browser' && !reused ? randomToken(32) : null;
  // A new session is written with the sign-in's other writes below; its row is known before.
  let session: SessionRow;
  let inserted: Companion | null = null;
  if (reused) session = reused;
  else {
    const fresh: NewSession = {
      realmId: realm.id,
      userId: t.userId,
      cookieDigest: sessionCookie ? digestToken(sessionCookie) : null,
      amr: t.completedFactors,
      acr: phishingResistantProved(t) ? 'phishing_resistant' : mfa ? 'mfa' : 'basic',
      mfa,
      recoveryRestricted: userState === 'recovery_restricted',
      rememberMe: t.rememberMe && !t.transient,
      transient: t.transient,
      lifetimes: lifetimesFor(t, sessionPolicyOf(policy.document.sessions)),
      clientId: t.clientId,
      userAgent: t.userAgent,
    };
    const insert = sessionInsert(fresh, now);
    inserted = insert;
    session = insert.row;
  }
  const granted = (t.consentScopes ?? t.scopes).filter((s) => !(t.transient && s === 'offline_access'));
  // A device sign-in approves the device authorization; the device redeems it itself.
  const code = t.intent === 'device' ? null : randomToken(32);
  const writes: Companion[] = [];
  if (code !== null)
    writes.push(
      codeInsert(
        {
          realmId: realm.id,
          codeDigest: digestToken(code),
          clientId: t.clientId,
          redirectUri: t.redirectUri,
          codeChallenge: t.codeChallenge,
          nonce: t.nonce,
          scopes: granted,
          resources: t.resources,
          userId: t.userId,
          sessionId: session.id,
          authTime: new Date(session.auth_time),
          amr: session.amr,
          acr: session.acr,
          transactionId: t.id,
          orgId: t.organizationId,
          expiresAt: new Date(now.getTime() + app.config.tokens.authorizationCodeTtlMs),
        },
        now,
      ),
    );
  // The user's grant to the client (in the organization): what this sign-in's tokens are checked against.
  const grant = grantUpsert(
    {
      realmId: realm.id,
      userId: t.userId,
      clientId: t.clientId,
      orgId: t.organizationId,
      scopes: granted,
      resources: t.resources,
    },
    now,
  );
  const redirectTo = code === null ? null : await redirectFor(app, q, realm, t, { code }, now);
  const record = recorder(q, {
    realmId: realm.id,
    actor: { type: 'user', id: t.userId },
    correlationId,
    now,
  });
  // Doc 2 event catalog: org_id on the envelope when an organization was selected. One statement
  // (issue 37): the last-login update with the new session, the code, the grant, the audit record
  // and the event; the account's revocation record comes back with it: when the code's tokens go live.
  const [signedIn] = await record.auditAlong<{ revoked_before: Date | null }>(
    'user.signed_in',
    {
      category: 'security',
      subject: { type: 'user', id: t.userId },
      orgId: t.organizationId,
      data: {
        session_id: session.id,
        client_id: t.clientId,
        transaction_id: t.id,
        amr: session.amr,
        mode: t.mode,
      },
    },
    {
      sql: `update users set last_login_at = $3, updated_at = $3 where realm_id = $1 and id = $2
       returning (select revoked_before from user_revocations r where r.realm_id = $1 and r.user_id = $2)
         as revoked_before`,
      params: [realm.id, t.userId, now],
    },
    { type: 'user.signed_in', data: { user_id: t.userId, session_id: session.id, client_id: t.clientId } },
    [...(inserted ? [inserted] : []), ...writes, grant],
  );
  if (code === null) await approveDevice(q, realm, t, session.id, granted, now, correlationId);
  app.metrics.authentications.inc({ outcome: 'success' });
  const tokensLiveFrom = signedIn
    ? tokensLiveFromRevocation(
        signedIn.revoked_before === null ? null : new Date(signedIn.revoked_before),
        now,
      )
    : await newTokensLiveFrom(q, realm.id, t.userId, now);
  return { tx: complete(t, redirectTo, now), session, sessionCookie, tokensLiveFrom };
}
