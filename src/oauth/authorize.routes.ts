// GET /realms/{realm}/oauth/authorize (spec doc 1, endpoint table): validates the authorization
// request, starts a browser transaction bound to its own pa_tx cookie, and sends the browser to
// the realm's login UI; a live SSO session (pa_sid) is reused, and prompt=none is answered here
// without interaction. Errors go back to the client's redirect URI only once client and redirect
// URI are known to be valid; before that they are answered here, with an HTML page for a browser.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { useBrowserErrorPages } from '../api/error-page.ts';
import { problem } from '../platform/http/problem.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import { startInputFrom } from '../signin/authorization-params.ts';
import { authorize } from '../signin/authorize.service.ts';
import { SESSION_COOKIE, TX_COOKIE, txCookie } from '../signin/cookies.ts';

type Query = Record<string, string | string[] | undefined>;

const valuesOf =
  (q: Query) =>
  (name: string): readonly string[] => {
    const v = q[name];
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  };

export function registerAuthorize(app: FastifyInstance, ctx: ApiDeps): void {
  app.register(async (scope) => {
    // A request that cannot go back to the client is answered here: a page for a browser, the
    // problem document for an API caller (decision D25).
    useBrowserErrorPages(scope, ctx.log, 'authorize');
    scope.get<{ Params: { realm: string }; Querystring: Query }>(
      '/realms/:realm/oauth/authorize',
      async (req, reply) => {
        const realm = await findRequestedRealm(ctx, req.params.realm);
        if (!realm) throw problem.notFound('no such realm');
        const input = startInputFrom(valuesOf(req.query));
        const ua = req.headers['user-agent'];
        if (typeof ua === 'string') input.userAgent = ua;

        const sid = req.cookies?.[SESSION_COOKIE] ?? null;
        const outcome = await ctx.db.tx((q) => authorize(ctx, q, realm, input, sid, String(req.id)));
        if (outcome.kind === 'redirect') return reply.code(303).header('location', outcome.location).send();
        const { created, loginUi: target } = outcome;
        target.searchParams.set('transaction_id', created.tx.id);
        target.searchParams.set('realm', realm.name);
        reply.setCookie(TX_COOKIE, created.secret, {
          ...txCookie(ctx.config.server.publicOrigin, realm.name, created.tx.id),
          maxAge: Math.floor(ctx.config.tokens.transactionTtlMs / 1000),
        });
        return reply
          .code(303)
          .header('location', target.toString())
          .header('cache-control', 'no-store')
          .send();
      },
    );
  });
}
