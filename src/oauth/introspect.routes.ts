// POST /realms/{realm}/oauth/introspect (RFC 7662; spec doc 1, endpoint table; doc 2,
// Authentication 7): confidential clients registered as introspectors ask about a token of their
// resource. The service logic is in introspection.ts.
import type { FastifyInstance } from 'fastify';
import { singleParam } from '../clients/client-auth-request.ts';
import type { AppContext } from '../main/context.ts';
import { introspectToken } from './introspection.ts';
import { authenticateOAuthClient, oauthEndpoint } from './oauth-endpoint.ts';
import { oauthError } from './oauth-error.ts';

export function registerIntrospect(app: FastifyInstance, ctx: AppContext): void {
  oauthEndpoint(
    app,
    ctx,
    'introspect',
    async (call) => {
      const now = ctx.clock.now();
      const { client } = await authenticateOAuthClient(ctx, call, 'introspect', now);
      // Doc 2, Authentication 7: a client that proved nothing (method none) cannot introspect.
      if (client.token_endpoint_auth_method === 'none') {
        throw oauthError.invalidClient({ debug: 'public_client_introspection' });
      }
      const token = singleParam(call.form, 'token');
      if (token === null) throw oauthError.invalidRequest('parameter token is required');
      // token_type_hint only speeds up a search (RFC 7662 section 2.1); the token's shape already
      // tells us where to look, so the hint is read for repetition and otherwise ignored.
      singleParam(call.form, 'token_type_hint');
      return introspectToken(ctx, call.realm, client.id, token, now);
    },
    // Realm suspension leaves unexpired tokens introspectable (doc 2, Revocation exposure).
    { suspendedRealms: true },
  );
}
