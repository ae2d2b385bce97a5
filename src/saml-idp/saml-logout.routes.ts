// Single logout at the SAML identity provider (docs/saml-idp.md, Single logout):
//   GET /realms/{realm}/saml/slo   HTTP-Redirect binding: an SP's LogoutRequest (answered with a
//                                  LogoutResponse, after the other SPs' front-channel logouts) or
//                                  an SP's LogoutResponse to a LogoutRequest ProudAuth sent
// A refused message gets a problem (an HTML error page for a browser); nothing is ended.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { useBrowserErrorPages } from '../api/error-page.ts';
import { problem } from '../platform/http/problem.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import { SESSION_COOKIE, sessionCookie } from '../signin/cookies.ts';
import { acceptLogoutRequest, acceptLogoutResponse } from './saml-logout.service.ts';
import { sendLogoutPage } from './saml-logout-page.ts';

const rawQueryOf = (req: FastifyRequest): string => {
  const at = req.url.indexOf('?');
  return at < 0 ? '' : req.url.slice(at + 1);
};

export function registerSamlLogoutRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  app.register(async (scope) => {
    useBrowserErrorPages(scope, ctx.log, 'logout');
    scope.get<{ Params: { realm: string }; Querystring: Record<string, unknown> }>(
      '/realms/:realm/saml/slo',
      async (req, reply) => {
        const realm = await findRequestedRealm(ctx, req.params.realm);
        if (!realm) throw problem.notFound('no such realm');
        reply.header('cache-control', 'no-store');
        const rawQuery = rawQueryOf(req);
        const params = new URLSearchParams(rawQuery);
        const request = params.getAll('SAMLRequest');
        const response = params.getAll('SAMLResponse');
        const relay = params.getAll('RelayState');
        if (request.length + response.length !== 1 || relay.length > 1)
          throw problem.invalidRequest('one SAMLRequest or SAMLResponse is required');
        if (response.length === 1) {
          const { success } = await acceptLogoutResponse(ctx, realm, {
            samlResponse: response[0]!,
            rawQuery,
          });
          return reply
            .code(200)
            .header('content-type', 'text/plain; charset=utf-8')
            .send(success ? 'Signed out.' : 'The application reported that it could not sign out.');
        }
        const cookie = req.cookies?.[SESSION_COOKIE] ?? null;
        const answer = await acceptLogoutRequest(
          ctx,
          realm,
          { samlRequest: request[0]!, relayState: relay[0] ?? null, rawQuery },
          cookie,
          String(req.id),
        );
        if (answer.endedBrowserSession)
          reply.clearCookie(SESSION_COOKIE, sessionCookie(ctx.config.server.publicOrigin, realm.name));
        if (answer.frontChannel.length === 0)
          return reply.code(303).header('location', answer.responseUrl).send();
        return sendLogoutPage(reply, answer.frontChannel, answer.responseUrl);
      },
    );
  });
}
