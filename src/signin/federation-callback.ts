// The upstream's callback (docs/federation.md, The callback): the browser returns from the
// upstream provider to /realms/{realm}/federation/{alias}/callback with the authorization
// response. In order, each check refusing before anything changes:
//   1. the state names a request of this realm, not used before and not expired; claiming it
//      commits at once, so a replayed state finds it used;
//   2. the request was sent through this connection (an answer arriving at another connection's
//      redirect URI is a mix-up: a failed proof of the transaction);
//   3. in browser mode, the pa_fed cookie of the browser that left;
//   4. oauth4webapi checks the response (state, RFC 9207 iss), redeems the code with the PKCE
//      verifier and validates the ID token (issuer, audience, expiry, nonce, signature);
// and then, in one database transaction on the locked sign-in transaction, the upstream identity
// signs in, links, creates an account or waits for a link (federation-signin.ts), and the
// transaction is evaluated and completed as after any step.
import { recorder } from '../audit/index.ts';
import type { CallbackOutcome } from '../federation/upstream-client.ts';
import {
  type ConnectionRow,
  claimFederationRequest,
  type FederationRequestRow,
  findConnectionByRef,
} from '../identity-providers/index.ts';
import type { Call } from '../kernel/call.ts';
import { digestToken } from '../kernel/digest.ts';
import type { Tx } from '../platform/db/db.ts';
import { policyValue, type RealmRow } from '../realms/index.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import { loadAll, settle } from './advance.ts';
import { applyUpstreamIdentity, type FederatedResult, noteOutage } from './federation-signin.ts';
import { loginUiOf } from './login-ui.ts';
import type { StoredSamlOutcome } from './saml-acs.ts';
import { notifySignedIn } from './sign-in-hooks.ts';
import type { SigninDeps } from './signin.deps.ts';
import { findTransaction, lockTransaction, saveTransaction } from './signin.repo.ts';
import type { SigninTx } from './transaction.ts';
import { expire, fail, isExpired, withFailure } from './transitions.ts';

/** Why the callback page says the sign-in cannot go on here. */
export type CallbackProblem =
  | 'unknown_realm'
  | 'unknown_request'
  | 'wrong_connection'
  | 'other_browser'
  | 'transaction_ended';

export type CallbackAnswer =
  /** Browser mode: on to the client (completed, failed, cancelled) or back to the login UI. */
  | {
      kind: 'redirect';
      location: string;
      sessionCookie?: { value: string; maxAgeSeconds: number | null };
      /** The transaction ended: its pa_tx cookie is cleared. */
      endedTransaction?: string;
    }
  /** Headless mode: the person goes back to the application, which reads the state itself. */
  | { kind: 'done'; status: SigninTx['status']; locale: string | null }
  | { kind: 'problem'; status: number; problem: CallbackProblem; locale: string | null };

const problemAnswer = (
  status: number,
  problem: CallbackProblem,
  locale: string | null = null,
): CallbackAnswer => ({
  kind: 'problem',
  status,
  problem,
  locale,
});

const callOf = (realm: RealmRow, t: SigninTx, correlationId: string, now: Date): Call => ({
  realmId: realm.id,
  actor: t.userId ? { type: 'user', id: t.userId } : { type: 'system', id: null },
  correlationId,
  now,
});

async function refused(app: SigninDeps, q: Tx, call: Call, t: SigninTx, reason: string): Promise<SigninTx> {
  const next = withFailure(t);
  app.metrics.authentications.inc({ outcome: 'failure' });
  await recorder(q, call).audit(
    next.status === 'failed' ? 'signin.transaction.failed' : 'signin.proof_failed',
    {
      category: 'security',
      outcome: 'failure',
      ...(t.userId ? { subject: { type: 'user', id: t.userId } } : {}),
      data: { transaction_id: t.id, factor: 'fed', failures: next.failures, reason: reason.slice(0, 200) },
    },
  );
  return next;
}

/** What the upstream's answer does to the locked, pending transaction. */
async function apply(
  app: SigninDeps,
  q: Tx,
  call: Call,
  t: SigninTx,
  c: ConnectionRow,
  outcome: CallbackOutcome | { kind: 'mix_up' },
): Promise<{ tx: SigninTx; result: FederatedResult | CallbackOutcome['kind'] | 'mix_up' }> {
  switch (outcome.kind) {
    case 'mix_up':
      return {
        tx: await refused(app, q, call, t, 'the answer arrived at another connection'),
        result: 'mix_up',
      };
    case 'refused':
      return { tx: await refused(app, q, call, t, outcome.reason), result: 'refused' };
    case 'unavailable':
      await noteOutage(q, call, t.id, c.id, 'callback', outcome.reason);
      return { tx: t, result: 'unavailable' };
    case 'declined':
      return { tx: t, result: 'declined' };
    case 'identity': {
      const applied = await applyUpstreamIdentity(q, t, {
        call,
        keyring: app.keyring,
        connection: c,
        identity: outcome.identity,
        tokens: outcome.tokens,
      });
      if (applied.result === 'refused')
        return {
          tx: await refused(app, q, call, t, 'the upstream identity belongs to another account'),
          result: 'refused',
        };
      return applied;
    }
  }
}

/** SAML keeps no upstream tokens. */
const NO_TOKENS = { accessToken: '', refreshToken: null, scope: null, expiresIn: null };

/**
 * SAML: what the assertion consumer service kept (saml-acs.ts); a request it never saw answered
 * (the browser came here without passing the ACS) is a failed proof.
 */
function samlOutcomeOf(stored: unknown): CallbackOutcome {
  const o = (typeof stored === 'string' ? JSON.parse(stored) : stored) as StoredSamlOutcome | null;
  if (!o) return { kind: 'refused', reason: 'no SAML answer arrived for this request' };
  return o.kind === 'identity' ? { kind: 'identity', identity: o.identity, tokens: NO_TOKENS } : o;
}

export interface CallbackInput {
  realmName: string;
  alias: string;
  params: URLSearchParams;
  /** The pa_fed cookie the browser sent, if any. */
  browserCookie: string | null;
  correlationId: string;
}

export async function handleCallback(app: SigninDeps, input: CallbackInput): Promise<CallbackAnswer> {
  const realm = await findRequestedRealm(app, input.realmName);
  if (!realm) return problemAnswer(404, 'unknown_realm');
  const state = input.params.get('state');
  const connection = await findConnectionByRef(app.db, realm.id, input.alias);
  if (!state || state.length > 512 || !connection || connection.alias !== input.alias.toLowerCase())
    return problemAnswer(400, 'unknown_request');
  const claimed: FederationRequestRow | null = await app.db.tx((q) =>
    claimFederationRequest(q, realm.id, digestToken(state), app.clock.now()),
  );
  if (!claimed) return problemAnswer(400, 'unknown_request');
  const snapshot = await findTransaction(app.db, realm.id, claimed.transaction_id);
  if (!snapshot) return problemAnswer(400, 'unknown_request');
  const locale = snapshot.tx.uiLocales;
  if (claimed.browser_digest !== null) {
    const presented = input.browserCookie ? digestToken(input.browserCookie) : null;
    if (presented !== claimed.browser_digest) return problemAnswer(400, 'other_browser', locale);
  }
  const mixUp = claimed.provider_id !== connection.id;
  const outcome: CallbackOutcome | { kind: 'mix_up' } = mixUp
    ? { kind: 'mix_up' }
    : claimed.saml_request_id !== null
      ? samlOutcomeOf(claimed.saml_outcome)
      : connection.state !== 'active'
        ? { kind: 'unavailable', reason: 'the connection is disabled' }
        : await app.upstream.finish(
            connection,
            {
              state,
              nonce: claimed.nonce,
              codeVerifier: claimed.code_verifier,
              redirectUri: claimed.redirect_uri,
            },
            input.params,
          );

  const done = await app.db.tx(async (q) => {
    const stored = await lockTransaction(q, realm.id, claimed.transaction_id);
    if (!stored) return null;
    const now = app.clock.now();
    let t = stored.tx;
    if (isExpired(t, now)) {
      await saveTransaction(q, expire(t), now);
      return null;
    }
    if (t.status !== 'pending') return null;
    const known = await loadAll(app, q, realm, t);
    const call = callOf(realm, t, input.correlationId, now);
    t =
      known.client.state === 'active'
        ? (await apply(app, q, call, t, connection, outcome)).tx
        : fail(t, 'access_denied');
    return { ...(await settle(app, q, realm, t, now, input.correlationId, known)), policy: known.policy };
  });
  if (!done) return problemAnswer(409, 'transaction_ended', locale);
  if (mixUp) return problemAnswer(400, 'wrong_connection', locale);
  const t = done.tx;
  await notifySignedIn(app, t, realm.hook_kinds);
  if (t.mode === 'headless') return { kind: 'done', status: t.status, locale };
  if (t.status !== 'pending' && t.redirectTo)
    return {
      kind: 'redirect',
      location: t.redirectTo,
      endedTransaction: t.id,
      ...(done.sessionCookie ? { sessionCookie: done.sessionCookie } : {}),
    };
  const ui = loginUiOf(app, policyValue(done.policy, 'interaction', 'login_ui_url'));
  ui.searchParams.set('transaction_id', t.id);
  ui.searchParams.set('realm', realm.name);
  return { kind: 'redirect', location: ui.toString() };
}
