// The device authorization request (RFC 8628 section 3.1-3.2): a client allowed the device grant
// asks for a device code and a user code. Both are stored as digests; the person types the user
// code into the login UI (docs/oauth-device.md), which starts a transaction with intent device.
import { recorder } from '../audit/index.ts';
import type { ClientRow } from '../clients/index.ts';
import { digestToken } from '../kernel/digest.ts';
import { oauthError } from '../kernel/oauth-error.ts';
import { parseScopeParam } from '../kernel/scope.ts';
import { newId, randomToken } from '../platform/ids.ts';
import type { RealmRow } from '../realms/index.ts';
import { currentPolicy } from '../realms/index.ts';
import { insertDeviceAuthorization } from './device-authorizations.repo.ts';
import { configuredLoginUi } from './login-ui.ts';
import type { SigninDeps } from './signin.deps.ts';
import { grantedAudiences, MAX_RESOURCES } from './start.ts';
import { newUserCode, normalizeUserCode } from './user-code.ts';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8628 section 3.2: the polling interval a client starts with. */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;

export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** Where a person enters a user code: the realm's login UI with mode=device. */
export function verificationUri(loginUi: URL, realmName: string): URL {
  const url = new URL(loginUi);
  url.searchParams.set('realm', realmName);
  url.searchParams.set('mode', 'device');
  return url;
}

export async function requestDeviceAuthorization(
  app: SigninDeps,
  realm: RealmRow,
  client: ClientRow,
  form: URLSearchParams,
  now: Date,
  correlationId: string,
): Promise<DeviceAuthorizationResponse> {
  const scopeValues = form.getAll('scope');
  if (scopeValues.length > 1) throw oauthError.invalidRequest('scope must be sent once');
  const scopes = parseScopeParam(scopeValues[0] ?? 'openid');
  if (!scopes.ok) throw oauthError.invalidScope(`scope is ${scopes.reason.replace('_', ' ')}`);
  const resources = form.getAll('resource').filter((r) => r !== '');
  if (resources.length > MAX_RESOURCES) throw oauthError.invalidTarget(`at most ${MAX_RESOURCES} resources`);
  if (resources.some((r) => !URL.canParse(r) || r.includes('#')))
    throw oauthError.invalidTarget('resource must be an absolute URI');

  return app.db.tx(async (q) => {
    const audiences = await grantedAudiences(q, realm, app.config.server.publicOrigin, client, resources);
    if (!audiences.ok) throw oauthError.invalidTarget(audiences.refused);
    const policy = await currentPolicy(q, realm.id);
    // Without a login UI nobody could enter the user code: refused before anything is stored.
    const loginUi = configuredLoginUi(app, policy);
    if (!loginUi)
      throw oauthError.temporarilyUnavailable('the realm has no login UI where a user code can be entered');
    const page = verificationUri(loginUi, realm.name);
    const deviceCode = randomToken(32);
    const expiresAt = new Date(now.getTime() + app.config.tokens.deviceCodeTtlMs);
    const id = newId('dva', now.getTime());
    let userCode = '';
    // A clash with a live code (or one expired less than a day ago) draws again.
    for (let attempt = 0; userCode === '' && attempt < 5; attempt++) {
      const candidate = newUserCode();
      const inserted = await insertDeviceAuthorization(
        q,
        {
          realmId: realm.id,
          id,
          deviceCodeDigest: digestToken(deviceCode),
          userCodeDigest: digestToken(normalizeUserCode(candidate) as string),
          clientId: client.client_id,
          scopes: scopes.scopes,
          resources: [...new Set(audiences.audiences)],
          intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS,
          expiresAt,
        },
        now,
      );
      if (inserted) userCode = candidate;
    }
    if (userCode === '') throw oauthError.temporarilyUnavailable('no free user code was found', 1);
    await recorder(q, {
      realmId: realm.id,
      actor: { type: 'client', id: client.client_id },
      correlationId,
      now,
    }).audit('device.authorization.requested', {
      category: 'security',
      data: { device_authorization_id: id, client_id: client.client_id, scopes: scopes.scopes },
    });
    const complete = new URL(page);
    complete.searchParams.set('user_code', userCode);
    return {
      device_code: deviceCode,
      user_code: userCode,
      verification_uri: page.toString(),
      verification_uri_complete: complete.toString(),
      expires_in: Math.floor(app.config.tokens.deviceCodeTtlMs / 1000),
      interval: DEVICE_POLL_INTERVAL_SECONDS,
    };
  });
}
