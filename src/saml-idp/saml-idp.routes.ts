// ProudAuth as a SAML identity provider (docs/saml-idp.md):
//   GET  /realms/{realm}/saml/metadata   the IdP metadata with the realm's SAML certificates
//   GET  /realms/{realm}/saml/sso        AuthnRequest, HTTP-Redirect binding
//   POST /realms/{realm}/saml/sso        AuthnRequest, HTTP-POST binding (then a 303 to /start)
//   GET  /realms/{realm}/saml/start      starts the sign-in of a request state, with the cookies
//   GET  /saml/continue                  where the sign-in comes back; answers the SP's ACS URL
// A request that cannot be answered to an SP gets a problem (an HTML page for a browser).
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { useBrowserErrorPages } from '../api/error-page.ts';
import { SAML_CONTINUE_PATH } from '../clients/index.ts';
import { problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import type { AuthorizeOutcome } from '../signin/authorize.service.ts';
import { SESSION_COOKIE, TX_COOKIE, txCookie } from '../signin/cookies.ts';
import { escapeHtml, sendHtmlPage } from './saml-html.ts';
import {
  type AcceptedRequest,
  acceptAuthnRequest,
  acceptIdpInitiated,
  continueSamlSignin,
  idpMetadata,
  type PostAnswer,
  startSamlSignin,
} from './saml-sso.service.ts';

const MAX_FORM_BYTES = 96 * 1024;
const SUBMIT_SCRIPT = 'document.forms[0].submit();';
const SCRIPT_HASH = createHash('sha256').update(SUBMIT_SCRIPT).digest('base64');

const rawQueryOf = (req: FastifyRequest): string => {
  const at = req.url.indexOf('?');
  return at < 0 ? '' : req.url.slice(at + 1);
};

/** The auto-submitting form of the HTTP-POST binding; a button for a browser without scripts. */
function sendPostForm(reply: FastifyReply, a: PostAnswer) {
  const relay =
    a.relayState === null
      ? ''
      : `<input type="hidden" name="RelayState" value="${escapeHtml(a.relayState)}">`;
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Signing in</title></head><body>
<form method="post" action="${escapeHtml(a.acsUrl)}"><input type="hidden" name="SAMLResponse" value="${escapeHtml(a.samlResponse)}">${relay}
<noscript><button type="submit">Continue</button></noscript></form><script>${SUBMIT_SCRIPT}</script></body></html>`;
  return sendHtmlPage(
    reply,
    html,
    `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; form-action ${new URL(a.acsUrl).origin}; frame-ancestors 'none'`,
  );
}

export function registerSamlIdpRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const realmOf = async (name: string): Promise<RealmRow> => {
    const realm = await findRequestedRealm(ctx, name);
    if (!realm) throw problem.notFound('no such realm');
    return realm;
  };

  /** The browser goes on like at the authorization endpoint: the login UI, or straight on. */
  const sendOutcome = (reply: FastifyReply, realm: RealmRow, outcome: AuthorizeOutcome) => {
    reply.header('cache-control', 'no-store');
    if (outcome.kind === 'redirect') return reply.code(303).header('location', outcome.location).send();
    const { created, loginUi: target } = outcome;
    target.searchParams.set('transaction_id', created.tx.id);
    target.searchParams.set('realm', realm.name);
    reply.setCookie(TX_COOKIE, created.secret, {
      ...txCookie(ctx.config.server.publicOrigin, realm.name, created.tx.id),
      maxAge: Math.floor(ctx.config.tokens.transactionTtlMs / 1000),
    });
    return reply.code(303).header('location', target.toString()).send();
  };

  const start = async (
    req: FastifyRequest,
    reply: FastifyReply,
    realm: RealmRow,
    accepted: AcceptedRequest,
  ) => {
    const ua = req.headers['user-agent'];
    const outcome = await ctx.db.tx((q) =>
      startSamlSignin(
        ctx,
        q,
        realm,
        accepted.id,
        {
          forceAuthn: accepted.forceAuthn,
          isPassive: accepted.isPassive,
          userAgent: typeof ua === 'string' ? ua : null,
        },
        req.cookies?.[SESSION_COOKIE] ?? null,
        String(req.id),
      ),
    );
    return sendOutcome(reply, realm, outcome);
  };

  app.register(async (scope) => {
    useBrowserErrorPages(scope, ctx.log, 'authorize');

    scope.get<{ Params: { realm: string } }>('/realms/:realm/saml/metadata', async (req, reply) => {
      const realm = await realmOf(req.params.realm);
      return reply
        .code(200)
        .header('content-type', 'application/samlmetadata+xml; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .send(await idpMetadata(ctx, realm));
    });

    scope.get<{ Params: { realm: string }; Querystring: Record<string, unknown> }>(
      '/realms/:realm/saml/sso',
      async (req, reply) => {
        const realm = await realmOf(req.params.realm);
        const params = new URLSearchParams(rawQueryOf(req));
        const samlRequest = params.getAll('SAMLRequest');
        const relay = params.getAll('RelayState');
        if (samlRequest.length !== 1 || relay.length > 1)
          throw problem.invalidRequest('one SAMLRequest is required');
        const accepted = await acceptAuthnRequest(ctx, realm, {
          binding: 'redirect',
          samlRequest: samlRequest[0]!,
          relayState: relay[0] ?? null,
          rawQuery: rawQueryOf(req),
        });
        if ('samlResponse' in accepted) return sendPostForm(reply, accepted);
        return start(req, reply, realm, accepted);
      },
    );

    scope.get<{ Params: { realm: string }; Querystring: Record<string, unknown> }>(
      '/realms/:realm/saml/initiate',
      async (req, reply) => {
        const realm = await realmOf(req.params.realm);
        const params = new URLSearchParams(rawQueryOf(req));
        const clientId = params.getAll('client_id');
        const relay = params.getAll('RelayState');
        if (clientId.length !== 1 || relay.length > 1 || !/^[\x21-\x7e]{1,128}$/.test(clientId[0]!))
          throw problem.invalidRequest('one client_id is required');
        return start(req, reply, realm, await acceptIdpInitiated(ctx, realm, clientId[0]!, relay[0] ?? null));
      },
    );

    scope.get<{ Params: { realm: string }; Querystring: Record<string, unknown> }>(
      '/realms/:realm/saml/start',
      async (req, reply) => {
        const realm = await realmOf(req.params.realm);
        const params = new URLSearchParams(rawQueryOf(req));
        const id = params.get('request');
        if (!id || !/^srq_[0-9a-z]{26}$/.test(id)) throw problem.invalidRequest('no SAML request state');
        return start(req, reply, realm, {
          id,
          forceAuthn: params.get('force_authn') === '1',
          isPassive: params.get('is_passive') === '1',
        });
      },
    );

    scope.get(SAML_CONTINUE_PATH, async (req, reply) =>
      sendPostForm(reply, await continueSamlSignin(ctx, new URLSearchParams(rawQueryOf(req)))),
    );
  });

  // HTTP-POST binding: a cross-site POST carries no SameSite=Lax cookie, so the request is
  // checked and kept here, and a 303 to /start picks up the browser's SSO session.
  app.register(async (scope) => {
    useBrowserErrorPages(scope, ctx.log, 'authorize');
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: MAX_FORM_BYTES },
      (_req, body, done) => done(null, body),
    );
    scope.post<{ Params: { realm: string } }>('/realms/:realm/saml/sso', async (req, reply) => {
      const realm = await realmOf(req.params.realm);
      const form = new URLSearchParams(typeof req.body === 'string' ? req.body : '');
      const samlRequest = form.getAll('SAMLRequest');
      const relay = form.getAll('RelayState');
      if (samlRequest.length !== 1 || relay.length > 1)
        throw problem.invalidRequest('one SAMLRequest is required');
      const accepted = await acceptAuthnRequest(ctx, realm, {
        binding: 'post',
        samlRequest: samlRequest[0]!,
        relayState: relay[0] ?? null,
        rawQuery: null,
      });
      if ('samlResponse' in accepted) return sendPostForm(reply, accepted);
      const next = new URLSearchParams({ request: accepted.id });
      if (accepted.forceAuthn) next.set('force_authn', '1');
      if (accepted.isPassive) next.set('is_passive', '1');
      return reply
        .code(303)
        .header('cache-control', 'no-store')
        .header('location', `/realms/${encodeURIComponent(realm.name)}/saml/start?${next.toString()}`)
        .send();
    });
  });
}
