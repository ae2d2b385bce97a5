// POST /realms/{realm}/oauth/introspect (RFC 7662; spec doc 1, endpoint table; doc 2,
// Authentication 7): confidential clients registered as introspectors ask about a token of their
// resource. The service logic is in introspection.ts.
import type { FastifyInstance } from 'fastify';
import { isOpaqueAccessToken } from '../access/access-token.ts';
import { checkLiveness, type Liveness } from '../access/token-liveness.ts';
import type { ApiDeps } from '../api/api.deps.ts';
import { authenticateOAuthClient, oauthEndpoint } from '../api/oauth-endpoint.ts';
import { singleParam } from '../clients/client-auth-request.ts';
import { oauthError } from '../kernel/oauth-error.ts';
import { candidateFor, INACTIVE_ANSWER, introspectToken, judge, livenessFacts } from './introspection.ts';

export function registerIntrospect(app: FastifyInstance, ctx: ApiDeps): void {
  oauthEndpoint(
    app,
    ctx,
    'introspect',
    async (call) => {
      const now = ctx.clock.now();
      const token = singleParam(call.form, 'token');
      // token_type_hint only speeds up a search (RFC 7662 section 2.1); the token's shape already
      // tells us where to look, so the hint is read for repetition and otherwise ignored.
      singleParam(call.form, 'token_type_hint');
      // A JWT is judged offline first; its live checks then load the calling client in the same
      // statement, so the whole call costs one round trip. Opaque tokens need their record first.
      const candidate =
        token !== null && !isOpaqueAccessToken(token)
          ? await candidateFor(ctx, call.realm, token, now)
          : null;
      let live: Liveness | null = null;
      const loadClient = candidate
        ? async (clientId: string) => {
            live = await checkLiveness(
              ctx.db,
              { ...livenessFacts(call.realm, candidate), callerClientId: clientId },
              now,
            );
            return live.caller;
          }
        : undefined;
      const { client } = await authenticateOAuthClient(ctx, call, 'introspect', now, loadClient);
      // Doc 2, Authentication 7: a client that proved nothing (method none) cannot introspect.
      if (client.token_endpoint_auth_method === 'none') {
        throw oauthError.invalidClient({ debug: 'public_client_introspection' });
      }
      if (token === null) throw oauthError.invalidRequest('parameter token is required');
      if (candidate && live) return judge(candidate, live);
      if (candidate || !isOpaqueAccessToken(token)) return INACTIVE_ANSWER;
      return introspectToken(ctx, call.realm, client.id, token, now);
    },
    // Realm suspension leaves unexpired tokens introspectable (doc 2, Revocation exposure).
    { suspendedRealms: true },
  );
}
