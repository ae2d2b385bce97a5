// POST /realms/{realm}/oauth/token (decision D9): client authentication, then one grant
// handler per grant_type. The realm's signing key is looked up first, so a realm without a usable
// key answers 503 before any code or refresh token is spent (spec doc 1, Errors case rule 3).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { failureBudgetsOf } from '../api/failure-budgets.ts';
import { authenticateOAuthClient, failureSubjectOf, oauthEndpoint } from '../api/oauth-endpoint.ts';
import { singleParam } from '../clients/client-auth-request.ts';
import { oauthError } from '../kernel/oauth-error.ts';
import { BlockLease } from '../platform/abuse-budget.ts';
import { tokenRequestJkt } from './dpop-token-request.ts';
import { authorizationCodeGrant } from './grants/authorization-code.grant.ts';
import { clientCredentialsGrant, prefetchServiceToken } from './grants/client-credentials.grant.ts';
import { DEVICE_CODE, deviceCodeGrant } from './grants/device-code.grant.ts';
import { type GrantContext, type TokenResponse, tokenSettings } from './grants/grant-context.ts';
import { JWT_BEARER, jwtBearerGrant } from './grants/jwt-bearer.grant.ts';
import { refreshTokenGrant } from './grants/refresh-token.grant.ts';
import { TOKEN_EXCHANGE, tokenExchangeGrant } from './grants/token-exchange.grant.ts';
import { certificateConfirmation } from './mtls-binding.ts';
import { SigningError } from './token-issuer.ts';
import { logTokenOutcome } from './token-log.ts';

const GRANTS: Record<string, { label: string; run: (g: GrantContext) => Promise<TokenResponse> }> = {
  authorization_code: { label: 'authorization_code', run: authorizationCodeGrant },
  refresh_token: { label: 'refresh_token', run: refreshTokenGrant },
  client_credentials: { label: 'client_credentials', run: clientCredentialsGrant },
  [TOKEN_EXCHANGE]: { label: 'token_exchange', run: tokenExchangeGrant },
  [DEVICE_CODE]: { label: 'device_code', run: deviceCodeGrant },
  [JWT_BEARER]: { label: 'jwt_bearer', run: jwtBearerGrant },
};

export function registerTokenEndpoint(app: FastifyInstance, ctx: ApiDeps): void {
  // Per-client budget, reserved in blocks so most requests write nothing (docs/security.md).
  const lease = new BlockLease();
  const budgets = ctx.config.security.budgets;
  oauthEndpoint(app, ctx, 'token', async (call) => {
    const now = ctx.clock.now();
    const logged = { requestId: String(call.req.id), realm: call.realm.name, form: call.form };
    const grantType = singleParam(call.form, 'grant_type');
    if (grantType === null) throw oauthError.invalidRequest('grant_type is required');
    const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
    if (!grant) {
      ctx.metrics.tokens.inc({ grant_type: 'unsupported', outcome: 'failure' });
      const e = oauthError.unsupportedGrantType();
      logTokenOutcome(ctx.log, logged, { grantType: 'unsupported', clientId: null, error: e });
      throw e;
    }
    // An emergency control may have turned the grant type off in this realm (docs/emergency.md);
    // refused before the client authenticates, so nothing is spent.
    if (await ctx.grantTypeControls.isDisabled(call.realm.id, grantType)) {
      ctx.metrics.tokens.inc({ grant_type: grant.label, outcome: 'failure' });
      const e = oauthError.unsupportedGrantType('the grant type is disabled in this realm');
      logTokenOutcome(ctx.log, logged, { grantType: grant.label, clientId: null, error: e });
      throw e;
    }
    let clientId: string | null = null;
    // Failed client authentication and invalid_grant answers spend failure budgets, checked
    // before any secret or grant is (api/failure-budgets.ts).
    const subject = failureSubjectOf(call);
    try {
      const prefetch =
        grantType === 'client_credentials' ? prefetchServiceToken(ctx, call.realm, call.form, now) : null;
      const caller = await authenticateOAuthClient(ctx, call, 'token', now, prefetch?.loadClient, subject);
      clientId = caller.client.client_id;
      const budget = await lease.take(
        ctx.db,
        {
          bucket: `token:client:${call.realm.id}:${clientId}`,
          limit: budgets.clientTokenRequests,
          windowMs: budgets.clientTokenWindowMs,
        },
        now,
      );
      if (!budget.ok) {
        ctx.metrics.rateLimited.inc({ surface: 'token' });
        throw oauthError.slowDown(budget.retryAfterSeconds);
      }
      if (!caller.client.grant_types.includes(grantType)) {
        throw oauthError.unauthorizedClient('the client may not use this grant type');
      }
      const dpopJkt = await tokenRequestJkt(ctx, call.req, call.reply, call.realm.id, now);
      const prefetched = prefetch?.take() ?? null;
      const signer = prefetched
        ? ctx.keyStore.signerFrom(call.realm.id, prefetched.key)
        : await ctx.keyStore.activeSigner(call.realm.id);
      if (!signer) {
        ctx.metrics.signingFailures.inc({ reason: await ctx.keyStore.missingSignerReason(call.realm.id) });
        throw oauthError.temporarilyUnavailable('no signing key is available', 30);
      }
      const response = await grant
        .run({
          app: ctx,
          realm: call.realm,
          form: call.form,
          caller,
          signer,
          settings: { ...tokenSettings(ctx), confirmation: certificateConfirmation(call.req) },
          now,
          correlationId: call.req.id,
          prefetched,
          dpopJkt,
        })
        .catch((e: unknown) => failureBudgetsOf(ctx).counted(ctx.db, 'token', subject, e, now));
      ctx.metrics.tokens.inc({ grant_type: grant.label, outcome: 'success' });
      logTokenOutcome(ctx.log, logged, { grantType: grant.label, clientId });
      return response;
    } catch (e) {
      ctx.metrics.tokens.inc({ grant_type: grant.label, outcome: 'failure' });
      logTokenOutcome(ctx.log, logged, { grantType: grant.label, clientId, error: e });
      if (e instanceof SigningError) {
        ctx.log.error({ err: (e.cause as Error)?.message }, 'token signing failed');
        ctx.metrics.signingFailures.inc({ reason: 'sign_error' });
        throw oauthError.temporarilyUnavailable('tokens cannot be signed right now', 30);
      }
      throw e;
    }
  });
}
