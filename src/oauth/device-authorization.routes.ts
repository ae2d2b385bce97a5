// POST /realms/{realm}/oauth/device_authorization (RFC 8628 section 3.1, docs/oauth-device.md):
// client authentication as at the token endpoint, then a device code and a user code for a
// client allowed the device grant.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { authenticateOAuthClient, oauthEndpoint } from '../api/oauth-endpoint.ts';
import { oauthError } from '../kernel/oauth-error.ts';
import { DEVICE_GRANT, requestDeviceAuthorization } from '../signin/device-authorization.service.ts';

export function registerDeviceAuthorization(app: FastifyInstance, ctx: ApiDeps): void {
  oauthEndpoint(app, ctx, 'device_authorization', async (call) => {
    const now = ctx.clock.now();
    // The emergency control of the grant type refuses before the client authenticates.
    if (await ctx.grantTypeControls.isDisabled(call.realm.id, DEVICE_GRANT)) {
      throw oauthError.unsupportedGrantType('the device grant is disabled in this realm');
    }
    const caller = await authenticateOAuthClient(ctx, call, 'token', now);
    if (!caller.client.grant_types.includes(DEVICE_GRANT)) {
      throw oauthError.unauthorizedClient('the client may not use the device grant');
    }
    return requestDeviceAuthorization(ctx, call.realm, caller.client, call.form, now, String(call.req.id));
  });
}
