// The device authorization grant (RFC 8628) as outside clients see it: openid-client 6 drives the
// whole flow (initiateDeviceAuthorization, pollDeviceAuthorizationGrant), oauth4webapi sends the
// single polls whose refusals are checked one by one. The person's side is the transaction API
// with intent device, as the login UI's device page uses it. Every refusal leaves nothing issued.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { dpopKey } from '../../harness/dpop-kit.ts';
import { json } from '../../harness/signin-driver.ts';
import { PASSWORD, type RpSetup, rpSetup } from './rp-kit.ts';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

interface DeviceSetup extends RpSetup {
  as: oauth.AuthorizationServer;
}

async function deviceSetup(t: TestContext, consentMode: 'implicit' | 'required' = 'implicit') {
  const s = await rpSetup(t, { overrides: { 'ui.enabled': true } });
  await s.h.createClient(s.realm, {
    clientId: 'tv-app',
    name: 'Living Room TV',
    type: 'device',
    redirectUris: [],
    grantTypes: [DEVICE_GRANT, 'refresh_token'],
    tokenEndpointAuthMethod: 'none',
    consentMode,
  });
  const issuer = new URL(s.issuer);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  return { ...s, as } satisfies DeviceSetup;
}

/** RFC 8628 section 3.1 through oauth4webapi, for the public client tv-app. */
async function requestCodes(s: DeviceSetup, clientId = 'tv-app', scope = 'openid profile offline_access') {
  const response = await oauth.deviceAuthorizationRequest(
    s.as,
    { client_id: clientId },
    oauth.None(),
    { scope },
    insecure,
  );
  return oauth.processDeviceAuthorizationResponse(s.as, { client_id: clientId }, response);
}

/** One poll (RFC 8628 section 3.4): the tokens, or the error code the token endpoint answered. */
async function pollOnce(s: DeviceSetup, deviceCode: string, clientId = 'tv-app') {
  const response = await oauth.deviceCodeGrantRequest(
    s.as,
    { client_id: clientId },
    oauth.None(),
    deviceCode,
    insecure,
  );
  try {
    return { tokens: await oauth.processDeviceCodeResponse(s.as, { client_id: clientId }, response) };
  } catch (e) {
    if (e instanceof oauth.ResponseBodyError) return { error: e.error, status: e.status };
    throw e;
  }
}

/** The person at the login UI's device page: the headless start with intent device. */
async function enterCode(s: RpSetup, userCode: string, clientId = 'account') {
  const base = `/api/v1/realms/${s.realm.name}/auth/transactions`;
  const start = await json(
    await s.h.get(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: clientId, intent: 'device', device_user_code: userCode }),
    }),
  );
  const step = async (path: string, body: unknown = {}) =>
    json(
      await s.h.get(`${base}/${start.body.transaction_id}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-transaction-token': start.body.continuation_token },
        body: JSON.stringify(body),
      }),
    );
  return { start, step };
}

async function signIn(s: RpSetup, userCode: string) {
  const entered = await enterCode(s, userCode);
  assert.equal(entered.start.status, 201, JSON.stringify(entered.start.body));
  assert.equal(entered.start.body.state.intent, 'device');
  assert.equal(entered.start.body.state.client.client_id, 'tv-app');
  assert.equal((await entered.step('identify', { identifier: 'alice@example.com' })).status, 200);
  return { ...entered, last: await entered.step('password', { password: PASSWORD }) };
}

const count = async (s: RpSetup, sql: string) =>
  Number((await s.h.ctx.db.query<{ n: string }>(sql, [s.realm.id])).rows[0]?.n ?? 0);

/** What a refused poll must not leave: no refresh family, no spent device authorization. */
async function issued(s: RpSetup) {
  return {
    families: await count(s, 'select count(*) as n from refresh_families where realm_id = $1'),
    spent: await count(
      s,
      `select count(*) as n from device_authorizations where realm_id = $1 and status = 'consumed'`,
    ),
  };
}
const NOTHING = { families: 0, spent: 0 };

test('openid-client: discovery, device authorization, sign-in with the user code, tokens once', async (t) => {
  const s = await deviceSetup(t);
  assert.equal(s.as.device_authorization_endpoint, `${s.issuer}/oauth/device_authorization`);
  assert.ok(s.as.grant_types_supported?.includes(DEVICE_GRANT));

  const config = await oidc.discovery(new URL(s.issuer), 'tv-app', undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
  const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid profile offline_access' });
  assert.match(device.user_code, USER_CODE);
  assert.equal(device.interval, 5);
  assert.equal(device.expires_in, 600);
  const page = new URL(device.verification_uri);
  assert.equal(`${page.origin}${page.pathname}`, `${s.h.publicUrl}/ui/login/`);
  assert.equal(page.searchParams.get('realm'), s.realm.name);
  const complete = new URL(device.verification_uri_complete ?? '');
  assert.equal(complete.searchParams.get('user_code'), device.user_code);

  // Only digests are stored.
  const stored = await s.h.ctx.db.query<Record<string, unknown>>(
    'select * from device_authorizations where realm_id = $1',
    [s.realm.id],
  );
  const text = JSON.stringify(stored.rows);
  assert.ok(!text.includes(device.device_code) && !text.includes(device.user_code.replace('-', '')));

  // The person types the code in lower case, as the page allows.
  const signedIn = await signIn(s, (complete.searchParams.get('user_code') as string).toLowerCase());
  assert.equal(signedIn.last.status, 200, JSON.stringify(signedIn.last.body));
  assert.equal(signedIn.last.body.status, 'completed');
  assert.equal(signedIn.last.body.redirect_to, undefined, 'a device sign-in redirects nowhere');

  const tokens = await oidc.pollDeviceAuthorizationGrant(config, device);
  assert.ok(tokens.access_token);
  assert.ok(tokens.refresh_token, 'the device client has refresh_token and asked offline_access');
  const claims = tokens.claims();
  assert.equal(claims?.sub, s.user.id);
  assert.equal(claims?.aud, 'tv-app');
  await jwtVerify(tokens.id_token as string, s.jwks, { issuer: s.issuer, audience: 'tv-app' });
  assert.equal(decodeJwt(tokens.access_token).sub, s.user.id);

  // RFC 8628 section 3.5: the device code is spent; a second poll gets nothing more.
  const familiesBefore = (await issued(s)).families;
  const again = await pollOnce(s, device.device_code);
  assert.equal(again.error, 'invalid_grant');
  assert.equal((await issued(s)).families, familiesBefore);
  // The refresh token works like any other.
  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
  assert.ok(refreshed.access_token);
});

test('polling early: authorization_pending, then slow_down raising the interval by 5 seconds', async (t) => {
  const s = await deviceSetup(t);
  const device = await requestCodes(s);
  assert.equal((await pollOnce(s, device.device_code)).error, 'authorization_pending');
  assert.equal((await pollOnce(s, device.device_code)).error, 'slow_down');
  // The interval is now 10 s: 6 s later is still too early, 11 s after that is in time.
  s.h.clock.advance(6_000);
  assert.equal((await pollOnce(s, device.device_code)).error, 'slow_down');
  s.h.clock.advance(16_000);
  assert.equal((await pollOnce(s, device.device_code)).error, 'authorization_pending');
  assert.deepEqual(await issued(s), NOTHING);
  assert.equal(await count(s, 'select count(*) as n from sessions where realm_id = $1'), 0);
});

test('the person refuses consent or cancels: access_denied, nothing issued', async (t) => {
  const s = await deviceSetup(t, 'required');
  const refused = await requestCodes(s);
  const signedIn = await signIn(s, refused.user_code);
  assert.deepEqual(
    signedIn.last.body.next_actions.map((a: { type: string }) => a.type),
    ['consent'],
  );
  const denied = await signedIn.step('consent', { approve: false, scopes: [] });
  assert.equal(denied.body.status, 'failed', JSON.stringify(denied.body));
  assert.equal(denied.body.redirect_to, undefined);
  assert.equal((await pollOnce(s, refused.device_code)).error, 'access_denied');

  const cancelled = await requestCodes(s);
  const entered = await enterCode(s, cancelled.user_code);
  assert.equal((await entered.step('cancel')).body.status, 'cancelled');
  assert.equal((await pollOnce(s, cancelled.device_code)).error, 'access_denied');
  assert.deepEqual(await issued(s), NOTHING);
  const audits = await count(
    s,
    `select count(*) as n from audit_events where realm_id = $1 and type = 'device.authorization.denied'`,
  );
  assert.equal(audits, 2);
});

test('an expired device code: expired_token at the token endpoint, the user code refused at the start', async (t) => {
  const s = await deviceSetup(t);
  const device = await requestCodes(s);
  s.h.clock.advance(10 * 60_000 + 1_000);
  assert.equal((await pollOnce(s, device.device_code)).error, 'expired_token');
  const entered = await enterCode(s, device.user_code);
  assert.equal(entered.start.status, 400);
  assert.equal(entered.start.body.code, 'invalid_request');
  assert.equal(entered.start.body.error, 'invalid_grant');
  assert.deepEqual(await issued(s), NOTHING);
});

test('approved too late: the sign-in cannot approve an expired code and nothing is issued', async (t) => {
  const s = await deviceSetup(t);
  const device = await requestCodes(s);
  const entered = await enterCode(s, device.user_code);
  assert.equal((await entered.step('identify', { identifier: 'alice@example.com' })).status, 200);
  s.h.clock.advance(10 * 60_000 + 1_000);
  const late = await entered.step('password', { password: PASSWORD });
  assert.notEqual(late.status, 200);
  assert.equal((await pollOnce(s, device.device_code)).error, 'expired_token');
  assert.deepEqual(await issued(s), NOTHING);
  assert.equal(await count(s, 'select count(*) as n from sessions where realm_id = $1'), 0);
});

test('refusals: unknown codes, another client, a client without the grant, misuse at the start', async (t) => {
  const s = await deviceSetup(t);
  await s.h.createClient(s.realm, {
    clientId: 'other-tv',
    name: 'Other TV',
    type: 'device',
    redirectUris: [],
    grantTypes: [DEVICE_GRANT],
    tokenEndpointAuthMethod: 'none',
  });
  const device = await requestCodes(s);
  assert.equal((await pollOnce(s, 'not-a-device-code')).error, 'invalid_grant');
  assert.equal((await pollOnce(s, device.device_code, 'other-tv')).error, 'invalid_grant');

  // web-app is confidential and has no device grant.
  const response = await oauth.deviceAuthorizationRequest(
    s.as,
    { client_id: 'web-app' },
    oauth.ClientSecretBasic(s.secret),
    { scope: 'openid' },
    insecure,
  );
  await assert.rejects(
    oauth.processDeviceAuthorizationResponse(s.as, { client_id: 'web-app' }, response),
    (e: unknown) => e instanceof oauth.ResponseBodyError && e.error === 'unauthorized_client',
  );

  const wrong = await enterCode(s, 'BBBB-BBBB');
  assert.equal(wrong.start.status, 400);
  assert.equal(wrong.start.body.error, 'invalid_grant');
  const otherClient = await enterCode(s, device.user_code, 'other-tv');
  assert.equal(otherClient.start.status, 400);
  assert.equal(otherClient.start.body.error, 'invalid_grant');
  const withoutCode = await json(
    await s.h.get(`/api/v1/realms/${s.realm.name}/auth/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'account', intent: 'device' }),
    }),
  );
  assert.equal(withoutCode.status, 400);
  assert.equal(withoutCode.body.code, 'invalid_request');
  // The device's own client_id may start it as well; the code still waits for a decision.
  const own = await enterCode(s, device.user_code, 'tv-app');
  assert.equal(own.start.status, 201);
  assert.equal((await pollOnce(s, device.device_code)).error, 'authorization_pending');
  assert.deepEqual(await issued(s), NOTHING);
  assert.equal(await count(s, 'select count(*) as n from sessions where realm_id = $1'), 0);
});

test('bad values at the device authorization endpoint are OAuth errors, and nothing is stored', async (t) => {
  const s = await deviceSetup(t);
  const post = async (body: string, type = 'application/x-www-form-urlencoded') =>
    json(
      await s.h.get(`/realms/${s.realm.name}/oauth/device_authorization`, {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      }),
    );
  const cases: [string, number, string][] = [
    ['client_id=tv-app&scope=openid%20', 400, 'invalid_scope'],
    ['client_id=tv-app&scope=openid&scope=profile', 400, 'invalid_request'],
    ['client_id=tv-app&resource=orders', 400, 'invalid_target'],
    ['client_id=tv-app&resource=https%3A%2F%2Fnowhere.example', 400, 'invalid_target'],
    ['client_id=nobody', 401, 'invalid_client'],
    ['scope=openid', 401, 'invalid_client'],
  ];
  for (const [body, status, error] of cases) {
    const res = await post(body);
    assert.equal(res.status, status, `${body}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error, error, body);
  }
  assert.equal((await post('{"client_id":"tv-app"}', 'application/json')).status, 415);
  const unknownRealm = await json(
    await s.h.get('/realms/no-such-realm/oauth/device_authorization', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'client_id=tv-app',
    }),
  );
  assert.equal(unknownRealm.status, 404);
  assert.equal(await count(s, 'select count(*) as n from device_authorizations where realm_id = $1'), 0);
});

test('without a login UI the device authorization endpoint answers temporarily_unavailable', async (t) => {
  const s = await rpSetup(t);
  await s.h.createClient(s.realm, {
    clientId: 'tv-app',
    name: 'Living Room TV',
    type: 'device',
    redirectUris: [],
    grantTypes: [DEVICE_GRANT],
    tokenEndpointAuthMethod: 'none',
  });
  const res = await json(
    await s.h.get(`/realms/${s.realm.name}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'client_id=tv-app',
    }),
  );
  assert.equal(res.status, 503);
  assert.equal(res.body.error, 'temporarily_unavailable');
  assert.equal(await count(s, 'select count(*) as n from device_authorizations where realm_id = $1'), 0);
});

test('DPoP: a poll with a bad proof spends nothing; with the handle the token and the refresh family are bound to the key', async (t) => {
  const s = await deviceSetup(t);
  const codes = await requestCodes(s);
  const signedIn = await signIn(s, codes.user_code);
  assert.equal(signedIn.last.body.status, 'completed', JSON.stringify(signedIn.last.body));
  const tokenUrl = `${s.issuer}/oauth/token`;
  const poll = (proof: string) =>
    s.h
      .get(`/realms/${s.realm.name}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
        body: new URLSearchParams({
          grant_type: DEVICE_GRANT,
          device_code: codes.device_code,
          client_id: 'tv-app',
        }),
      })
      .then(json);
  const stranger = await dpopKey('ES256');
  const bad = await poll(await stranger.proof({ url: `${tokenUrl}/x` }));
  assert.deepEqual([bad.status, bad.body.error], [400, 'invalid_dpop_proof']);
  assert.deepEqual(await issued(s), NOTHING);

  const keyPair = await oauth.generateKeyPair('ES256');
  const client: oauth.Client = { client_id: 'tv-app' };
  const dpop = oauth.DPoP(client, keyPair);
  const tokens = await oauth.processDeviceCodeResponse(
    s.as,
    client,
    await oauth.deviceCodeGrantRequest(s.as, client, oauth.None(), codes.device_code, {
      ...insecure,
      DPoP: dpop,
    }),
  );
  assert.equal(tokens.token_type, 'dpop');
  assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt: await dpop.calculateThumbprint() });
  // The public client's refresh token answers only to its key.
  const refresh = (proof: string) =>
    s.h
      .get(`/realms/${s.realm.name}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token ?? '',
          client_id: 'tv-app',
        }),
      })
      .then(json);
  const stolen = await refresh(await stranger.proof({ url: tokenUrl }));
  assert.deepEqual([stolen.status, stolen.body.error], [400, 'invalid_grant']);
  const next = await oauth.processRefreshTokenResponse(
    s.as,
    client,
    await oauth.refreshTokenGrantRequest(s.as, client, oauth.None(), tokens.refresh_token ?? '', {
      ...insecure,
      DPoP: dpop,
    }),
  );
  assert.equal(next.token_type, 'dpop');
});
