// POST /realms/{realm}/oauth/par (RFC 9126): the client authenticates as at the token endpoint and
// pushes its authorization parameters (or a request object); they are checked as the
// authorization endpoint checks them and stored for 60 seconds. The answer is 201 with a
// single-use request_uri for the authorization endpoint or the headless start.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { authenticateOAuthClient, oauthEndpoint } from '../api/oauth-endpoint.ts';
import { OAuthError, type OAuthErrorCode, oauthError } from '../kernel/oauth-error.ts';
import { Problem } from '../platform/http/problem.ts';
import { startInputFrom } from '../signin/authorization-params.ts';
import { pushAuthorizationRequest } from '../signin/pushed-request.service.ts';

// The errors validateStart and the request object check can give (RFC 6749 4.1.2.1, RFC 9101).
const ERRORS = new Set<string>([
  'invalid_request',
  'unauthorized_client',
  'unsupported_response_type',
  'invalid_scope',
  'invalid_target',
  'access_denied',
  'invalid_request_object',
]);

const asOAuthError = (error: string, detail: string): OAuthError =>
  new OAuthError(400, (ERRORS.has(error) ? error : 'invalid_request') as OAuthErrorCode, detail);

export function registerPushedAuthorizationRequests(app: FastifyInstance, ctx: ApiDeps): void {
  oauthEndpoint(app, ctx, 'par', async (call) => {
    const now = ctx.clock.now();
    const caller = await authenticateOAuthClient(ctx, call, 'par', now);
    let input: ReturnType<typeof startInputFrom>;
    try {
      input = startInputFrom((name) => call.form.getAll(name));
    } catch (e) {
      if (e instanceof Problem) throw oauthError.invalidRequest(e.detail);
      throw e;
    }
    const ua = call.req.headers['user-agent'];
    if (typeof ua === 'string') input.userAgent = ua;
    const outcome = await ctx.db.tx((q) =>
      pushAuthorizationRequest(ctx, q, call.realm, caller.client.client_id, input, String(call.req.id)),
    );
    if (!outcome.ok) throw asOAuthError(outcome.error, outcome.detail);
    return call.reply.code(201).send({ request_uri: outcome.requestUri, expires_in: outcome.expiresIn });
  });
}
