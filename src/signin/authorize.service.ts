// The browser entry (GET /realms/{realm}/oauth/authorize): validate the request, pick up a live
// SSO session from pa_sid unless prompt=login or max_age forbids it, and either answer
// prompt=none at once or start a transaction and send the browser to the login UI.

import { digestToken } from '../kernel/digest.ts';
import type { Tx } from '../platform/db/db.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { policyValue } from '../realms/index.ts';
import { findLiveSessionByCookie } from '../sessions/index.ts';
import { loadAll } from './advance.ts';
import { resolveOrRefuse } from './authorization-request.ts';
import { authorizationRedirect } from './authorization-response.ts';
import { completeTransaction, issuerOf } from './complete.ts';
import { type Created, createTransaction, type SessionSeed } from './create.ts';
import { loginUiOf } from './login-ui.ts';
import { withOrganization } from './organization-rules.ts';
import type { SigninDeps } from './signin.deps.ts';
import { saveTransaction } from './signin.repo.ts';
import type { StartInput, StartParams } from './start.ts';
import { validateStart } from './start.ts';
import { StartReads } from './start-reads.ts';
import type { Factor, ResponseMode } from './transaction.ts';
import { fail } from './transitions.ts';

export type AuthorizeOutcome =
  | { kind: 'redirect'; location: string }
  | { kind: 'login_ui'; created: Created; loginUi: URL };

async function errorRedirect(
  app: SigninDeps,
  q: Tx,
  realm: RealmRow,
  target: { redirectUri: string; responseMode: ResponseMode; clientId: string; state: string | null },
  error: string,
  detail: string,
): Promise<string> {
  const signer = target.responseMode === 'query' ? null : await app.keyStore.activeSigner(realm.id, q);
  if (target.responseMode !== 'query' && !signer)
    throw problem.unavailable('the realm has no usable signing key');
  return authorizationRedirect(
    { ...target, issuer: issuerOf(app, realm) },
    { error, error_description: detail },
    signer,
    app.clock.now(),
  );
}

/** The browser's live session, when this request may reuse it (OIDC prompt=login, max_age). */
async function sessionSeed(app: SigninDeps, q: Tx, realm: RealmRow, p: StartParams, sid: string | null) {
  if (!sid || p.prompt.includes('login')) return null;
  const now = app.clock.now();
  const s = await findLiveSessionByCookie(q, realm.id, digestToken(sid), now);
  if (!s) return null;
  if (p.maxAge !== null && now.getTime() - new Date(s.auth_time).getTime() > p.maxAge * 1000) return null;
  return { sessionId: s.id, userId: s.user_id, factors: s.amr as Factor[] } satisfies SessionSeed;
}

/**
 * With a reusable session, a request that needs nothing more completes at once (SSO). Otherwise
 * prompt=none tells the client why interaction is needed, and any other request goes on at the
 * login UI in the new transaction.
 */
async function fromSession(
  app: SigninDeps,
  q: Tx,
  realm: RealmRow,
  p: StartParams,
  seed: SessionSeed | null,
  correlationId: string,
  reads: StartReads,
): Promise<AuthorizeOutcome | Created> {
  const target = {
    redirectUri: p.redirectUri,
    responseMode: p.responseMode,
    clientId: p.client.client_id,
    state: p.state,
  };
  const silent = p.prompt.includes('none');
  if (!seed) {
    if (!silent) return createTransaction(app, q, realm, p, 'browser', correlationId, null);
    return {
      kind: 'redirect',
      location: await errorRedirect(app, q, realm, target, 'login_required', 'no live session'),
    };
  }
  const created = await createTransaction(app, q, realm, p, 'browser', correlationId, seed);
  const loaded = await loadAll(app, q, realm, created.tx, { client: p.client, policy: await reads.policy() });
  const now = app.clock.now();
  if (loaded.evaluation.kind === 'complete') {
    const state = loaded.facts.user?.state ?? 'active';
    const tx = withOrganization(created.tx, loaded.facts);
    const done = await completeTransaction(app, q, realm, loaded.policy, tx, state, now, correlationId);
    await saveTransaction(q, done.tx, now);
    return { kind: 'redirect', location: done.tx.redirectTo as string };
  }
  if (!silent) return created;
  const ev = loaded.evaluation;
  const needsConsent = ev.kind === 'actions' && ev.actions.some((a) => a.type === 'consent');
  const [error, detail] = needsConsent
    ? ['consent_required', 'the user has not consented to these scopes']
    : ev.kind === 'blocked'
      ? ['login_required', 'the session cannot be used']
      : ['interaction_required', 'the sign-in needs the user'];
  const location = await errorRedirect(app, q, realm, target, error, detail);
  await saveTransaction(q, { ...fail(created.tx, 'access_denied'), redirectTo: location }, now);
  return { kind: 'redirect', location };
}

export async function authorize(
  app: SigninDeps,
  q: Tx,
  realm: RealmRow,
  input: StartInput,
  sessionCookie: string | null,
  correlationId: string,
): Promise<AuthorizeOutcome> {
  const reads = new StartReads(q, realm.id);
  const started = await validateStart(
    q,
    realm,
    await resolveOrRefuse(app, q, realm, input, reads),
    'authorize',
    app.config.server.publicOrigin,
    app.grantTypeControls,
    reads,
  );
  if (!started.ok) {
    const f = started.failure;
    if (f.kind === 'direct') throw new Problem(400, 'invalid_request', f.detail, { error: f.error });
    const target = { ...f.target, clientId: f.target.client.client_id };
    return { kind: 'redirect', location: await errorRedirect(app, q, realm, target, f.error, f.detail) };
  }
  const p = started.params;
  // Checked before any transaction is created, so a bad setting leaves nothing behind.
  const loginUi = p.prompt.includes('none')
    ? null
    : loginUiOf(app, policyValue(await reads.policy(), 'interaction', 'login_ui_url'));
  const seed = await sessionSeed(app, q, realm, p, sessionCookie);
  const r = await fromSession(app, q, realm, p, seed, correlationId, reads);
  if ('kind' in r) return r;
  return { kind: 'login_ui', created: r, loginUi: loginUi as URL };
}
