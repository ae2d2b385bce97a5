// federation/start {provider} (spec doc 1, endpoint table; docs/federation.md): sends the sign-in
// to an upstream provider the transaction offers (external_redirect), by alias or id. The
// upstream's authorization URL is built before the row lock (discovery may need the network);
// under the lock the request is recorded: its state as a digest, the nonce and the PKCE verifier,
// and in browser mode the digest of a pa_fed cookie that binds the callback to this browser. An
// upstream that cannot be reached leaves the upstream_unavailable notice instead.

import { samlEndpoints } from '../../federation/saml-sp.ts';
import { type UpstreamRequest, UpstreamUnavailable } from '../../federation/upstream-client.ts';
import {
  type ConnectionRow,
  deleteSigninFederation,
  findConnectionByRef,
  findSigninFederation,
  insertFederationRequest,
} from '../../identity-providers/index.ts';
import { digestToken } from '../../kernel/digest.ts';
import { object, string } from '../../platform/http/decode.ts';
import { Problem } from '../../platform/http/problem.ts';
import { newId, randomToken } from '../../platform/ids.ts';
import { findRealmById } from '../../realms/index.ts';
import { identifierTypeOf } from '../../users/index.ts';
import { startable } from '../federation-rules.ts';
import { noteOutage } from '../federation-signin.ts';
import { federationCallbackUrl } from '../federation-urls.ts';
import { type Step, stepActor } from './step.ts';

const decode = object({ provider: string({ minLength: 1, maxLength: 128, printableAscii: true }) });

type Prepared =
  | { kind: 'none' }
  | { kind: 'unavailable'; connection: ConnectionRow; reason: string }
  | { kind: 'ready'; connection: ConnectionRow; request: UpstreamRequest; redirectUri: string };

const notAllowed = () =>
  new Problem(409, 'connection_not_allowed', 'this provider is not offered to this sign-in');

export const federationStartStep: Step<{ provider: string }, Prepared> = {
  path: 'federation/start',
  // It proves nothing itself: the upstream's answer is checked at the callback, where a refused
  // one spends the transaction's failure budget.
  spendsBudgets: false,
  action: 'external_redirect',
  decode,
  async prepare(app, t, body) {
    const connection = await findConnectionByRef(app.db, t.realmId, body.provider);
    const realm = await findRealmById(app.db, t.realmId);
    if (connection?.state !== 'active' || !realm) return { kind: 'none' };
    const origin = app.config.server.publicOrigin;
    // SAML: the IdP posts its answer to the connection's assertion consumer service.
    const saml = connection.kind === 'saml' ? samlEndpoints(origin, realm.name, connection.alias) : null;
    const redirectUri = saml ? saml.acs : federationCallbackUrl(origin, realm.name, connection.alias);
    try {
      // An email address typed at identify helps the upstream pick the account; a local username
      // means nothing there and is not sent.
      const hint = t.identifier && identifierTypeOf(t.identifier) === 'email' ? t.identifier : null;
      const request = saml
        ? await app.upstream.startSaml(connection, saml)
        : await app.upstream.start(connection, redirectUri, hint);
      return { kind: 'ready', connection, request, redirectUri };
    } catch (e) {
      if (e instanceof UpstreamUnavailable) return { kind: 'unavailable', connection, reason: e.message };
      throw e;
    }
  },
  async run(q, t, _body, ctx, prepared) {
    // Offered means: active, allowed for this client, and of no organization other than the
    // sign-in's (or the one its identifier's domain names) — the external_redirect action's list.
    if (prepared.kind === 'none' || !startable(ctx.evaluation, prepared.connection.id)) throw notAllowed();
    const c = prepared.connection;
    if (prepared.kind === 'unavailable') {
      const call = {
        realmId: t.realmId,
        actor: stepActor(t.userId),
        correlationId: ctx.correlationId,
        now: ctx.now,
      };
      await noteOutage(q, call, t.id, c.id, 'start', prepared.reason);
      return { tx: t };
    }
    // A fresh attempt clears an earlier outage notice (a waiting link stays).
    if ((await findSigninFederation(q, t.realmId, t.id))?.status === 'upstream_unavailable')
      await deleteSigninFederation(q, t.realmId, t.id);
    const browser = t.mode === 'browser' ? randomToken(32) : null;
    await insertFederationRequest(
      q,
      t.realmId,
      {
        id: newId('fdr', ctx.now.getTime()),
        transactionId: t.id,
        providerId: c.id,
        stateDigest: digestToken(prepared.request.state),
        browserDigest: browser ? digestToken(browser) : null,
        nonce: prepared.request.nonce,
        codeVerifier: prepared.request.codeVerifier,
        redirectUri: prepared.redirectUri,
        expiresAt: t.expiresAt,
        // SAML: the AuthnRequest ID, the InResponseTo its answer must carry.
        samlRequestId: c.kind === 'saml' ? prepared.request.nonce : null,
      },
      ctx.now,
    );
    return {
      tx: t,
      externalRedirect: prepared.request.url,
      ...(browser ? { federationCookie: browser } : {}),
    };
  },
};
