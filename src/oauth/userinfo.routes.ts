// GET and POST /realms/{realm}/oauth/userinfo (OpenID Connect Core 1.0 section 5.3;
// decisions D8 and D9): the claims of the signed-in user that the token's scopes release. The
// token is a bearer for the built-in userinfo audience, read from the Authorization header only
// (spec doc 1, Authentication 7), and passes the live checks of doc 2, Revocation exposure.
// Errors follow RFC 6750 section 3.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { verifyOwnToken } from '../api/api-auth.ts';
import {
  checkResourceProof,
  dpopChallenge,
  presentedAuthorization,
  type ResourceProofError,
} from '../api/dpop-auth.ts';
import { useFormBodies, useOAuthErrors } from '../api/oauth-endpoint.ts';
import { BUILTIN_USERINFO, userinfoAudience } from '../kernel/audiences.ts';
import { OAuthError, type OAuthErrorCode } from '../kernel/oauth-error.ts';
import { problem } from '../platform/http/problem.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import { findProfileClaims } from '../users/index.ts';
import { scopeClaims } from './tokens/scope-claims.ts';

type BearerErrorCode = Extract<OAuthErrorCode, 'invalid_request' | 'invalid_token' | 'insufficient_scope'>;

function bearerError(status: number, error: BearerErrorCode | null, description: string, scope?: string) {
  const params = error === null ? [] : [`error="${error}"`, `error_description="${description}"`];
  if (scope) params.push(`scope="${scope}"`);
  const challenge = params.length > 0 ? `Bearer ${params.join(', ')}` : 'Bearer';
  return new OAuthError(status, error ?? 'invalid_token', description, { 'www-authenticate': challenge });
}

const invalidToken = () =>
  bearerError(401, 'invalid_token', 'the access token is invalid, expired or no longer active');

// RFC 9449 section 7.1: a DPoP-scheme request is answered with a DPoP challenge.
const dpopError = (ctx: ApiDeps, realmId: string, error: ResourceProofError, description: string) =>
  new OAuthError(401, error, description, dpopChallenge(ctx, realmId, error, description));

type UserinfoRequest = FastifyRequest<{ Params: { realm: string } }>;

async function answer(ctx: ApiDeps, req: UserinfoRequest, reply: FastifyReply) {
  const realm = await findRequestedRealm(ctx, req.params.realm);
  if (!realm) throw problem.notFound('no such realm');
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  const query = req.query as Record<string, unknown> | undefined;
  const body = req.body instanceof URLSearchParams ? req.body : null;
  if ((query && 'access_token' in query) || body?.has('access_token')) {
    throw bearerError(400, 'invalid_request', 'send the access token in the Authorization header only');
  }
  const header = req.headers.authorization;
  // RFC 6750 section 3.1: a request without any credentials gets a challenge without an error code.
  if (header === undefined) throw bearerError(401, null, 'an access token is required');
  const presented = presentedAuthorization(header, ctx.config.limits.maxTokenBytes);
  if (!presented) throw invalidToken();
  const { token } = presented;
  const dpop = presented.scheme === 'dpop';
  const own = await verifyOwnToken(ctx, realm, token, {
    audience: userinfoAudience(ctx.config.server.publicOrigin, realm.name),
    resourceId: BUILTIN_USERINFO,
    now: ctx.clock.now(),
    senderConstrained: dpop,
    certificateThumbprint: req.clientCertificate?.thumbprint ?? null,
  });
  if (dpop) {
    if (!own.ok)
      throw dpopError(
        ctx,
        realm.id,
        'invalid_token',
        'the access token is invalid, expired or no longer active',
      );
    const jkt = own.token.cnf && 'jkt' in own.token.cnf ? own.token.cnf.jkt : null;
    const proof = await checkResourceProof(ctx, req, realm.id, token, jkt);
    if (!proof.ok) throw dpopError(ctx, realm.id, proof.error, proof.description);
  }
  if (!own.ok && own.reason === 'wrong_audience') {
    // The commonest mistake with SPA libraries: an access token for an API whose grant had no
    // openid (docs/tokens.md, UserInfo audience).
    throw bearerError(
      401,
      'invalid_token',
      'the access token audience does not include UserInfo; a token for an API serves UserInfo only when its grant includes the openid scope',
    );
  }
  if (!own.ok || own.live.subjectType !== 'user') throw invalidToken();
  const t = own.token;
  if (!t.scopes.includes('openid')) {
    throw bearerError(403, 'insufficient_scope', 'the access token lacks the openid scope', 'openid');
  }
  const user = await findProfileClaims(ctx.db, realm.id, t.subject);
  if (!user) throw invalidToken();
  return { sub: t.subject, ...scopeClaims(t.scopes, user) };
}

export function registerUserinfo(app: FastifyInstance, ctx: ApiDeps): void {
  app.register(async (scope) => {
    // OIDC Core 5.3.1 allows a form-encoded POST; its body is read only to refuse a token in it.
    useFormBodies(scope);
    useOAuthErrors(scope, ctx);
    const path = '/realms/:realm/oauth/userinfo';
    scope.get<{ Params: { realm: string } }>(path, (req, reply) => answer(ctx, req, reply));
    scope.post<{ Params: { realm: string } }>(path, (req, reply) => answer(ctx, req, reply));
  });
}
