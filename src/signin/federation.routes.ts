// The upstream's callback (docs/federation.md, The callback): GET with the authorization response
// in the query, and POST for upstreams that answer by form_post (Apple). A form_post arrives as a
// cross-site POST, which carries no SameSite=Lax cookie, so it is turned into the same GET by a
// 303 (a top-level GET navigation does carry pa_fed) before anything is checked.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { samlEndpoints } from '../federation/saml-sp.ts';
import { findConnectionByRef } from '../identity-providers/index.ts';
import { problem } from '../platform/http/problem.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import {
  FEDERATION_COOKIE,
  federationCookie,
  SESSION_COOKIE,
  sessionCookie,
  TX_COOKIE,
  txCookie,
} from './cookies.ts';
import { type CallbackAnswer, handleCallback } from './federation-callback.ts';
import { CALLBACK_PAGE_CSP, callbackPage } from './federation-page.ts';
import { handleAcs, MAX_SAML_RESPONSE_BYTES } from './saml-acs.ts';

const PATH = '/realms/:realm/federation/:alias/callback';
const SAML_ACS = '/realms/:realm/federation/:alias/saml/acs';
const SAML_METADATA = '/realms/:realm/federation/:alias/saml/metadata';
const MAX_FORM_BYTES = 64 * 1024;

type Params = { realm: string; alias: string };

const queryOf = (req: FastifyRequest): string => {
  const at = req.url.indexOf('?');
  return at < 0 ? '' : req.url.slice(at + 1);
};

export function registerFederationRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const publicOrigin = ctx.config.server.publicOrigin;

  const answer = (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply, a: CallbackAnswer) => {
    const { realm } = req.params;
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    // The binding has done its job either way.
    reply.clearCookie(FEDERATION_COOKIE, federationCookie(publicOrigin, realm));
    if (a.kind === 'redirect') {
      if (a.endedTransaction) reply.clearCookie(TX_COOKIE, txCookie(publicOrigin, realm, a.endedTransaction));
      if (a.sessionCookie)
        reply.setCookie(SESSION_COOKIE, a.sessionCookie.value, {
          ...sessionCookie(publicOrigin, realm),
          ...(a.sessionCookie.maxAgeSeconds !== null ? { maxAge: a.sessionCookie.maxAgeSeconds } : {}),
        });
      return reply.code(303).header('location', a.location).send();
    }
    const message =
      a.kind === 'done' ? (a.status === 'pending' || a.status === 'completed' ? 'done' : 'ended') : a.problem;
    return reply
      .code(a.kind === 'done' ? 200 : a.status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', CALLBACK_PAGE_CSP)
      .send(callbackPage(message, a.locale, String(req.id)));
  };

  app.get<{ Params: Params }>(PATH, async (req, reply) => {
    const a = await handleCallback(ctx, {
      realmName: req.params.realm,
      alias: req.params.alias,
      params: new URLSearchParams(queryOf(req)),
      browserCookie: req.cookies?.[FEDERATION_COOKIE] ?? null,
      correlationId: String(req.id),
    });
    return answer(req, reply, a);
  });

  app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: MAX_FORM_BYTES },
      (_req, body, done) => done(null, body),
    );
    scope.post<{ Params: Params }>(PATH, async (req, reply) => {
      const form = new URLSearchParams(typeof req.body === 'string' ? req.body : '');
      // Relative: the same origin that received the post.
      const target = `/realms/${encodeURIComponent(req.params.realm)}/federation/${encodeURIComponent(req.params.alias)}/callback?${form.toString()}`;
      return reply.code(303).header('cache-control', 'no-store').header('location', target).send();
    });
  });

  // SAML: the IdP's HTTP-POST answer (saml-acs.ts), then on to the callback by a top-level GET.
  app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: MAX_SAML_RESPONSE_BYTES + 4096 },
      (_req, body, done) => done(null, body),
    );
    scope.post<{ Params: Params }>(SAML_ACS, async (req, reply) => {
      const a = await handleAcs(ctx, {
        realmName: req.params.realm,
        alias: req.params.alias,
        form: new URLSearchParams(typeof req.body === 'string' ? req.body : ''),
      });
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      if (a.kind === 'continue') return reply.code(303).header('location', a.location).send();
      return reply
        .code(a.status)
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', CALLBACK_PAGE_CSP)
        .send(callbackPage(a.problem, null, String(req.id)));
    });
  });

  // SAML: the connection's service-provider metadata, public as IdPs fetch it.
  app.get<{ Params: Params }>(SAML_METADATA, async (req, reply) => {
    const realm = await findRequestedRealm(ctx, req.params.realm);
    const c = realm ? await findConnectionByRef(ctx.db, realm.id, req.params.alias) : null;
    if (!realm || c?.kind !== 'saml' || c.alias !== req.params.alias.toLowerCase())
      throw problem.notFound('no such SAML connection');
    const xml = await ctx.upstream
      .samlMetadata(c, samlEndpoints(ctx.config.server.publicOrigin, realm.name, c.alias))
      .catch(() => {
        throw problem.unavailable('the connection key cannot be read');
      });
    return reply
      .header('cache-control', 'public, max-age=300')
      .type('application/samlmetadata+xml')
      .send(xml);
  });
}
