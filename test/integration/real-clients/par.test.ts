// Pushed authorization requests (RFC 9126) and request objects (RFC 9101) as openid-client 6 and
// oauth4webapi 3 use them: discovery, a code flow whose parameters were pushed first, a pushed
// request object, request objects at the authorization endpoint, and the refusals (unknown, used,
// expired or foreign request_uri; bad request objects; clients that must push), each leaving
// nothing issued.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { apiCaller } from '../../harness/api-kit.ts';
import { json } from '../../harness/signin-driver.ts';
import { assertNothingIssued, authorize, count, issuedSoFar, rows } from '../../harness/signin-kit.ts';
import { REDIRECT, type RpSetup, rpSetup, signInAt, startBodyOf } from './rp-kit.ts';

const insecure = { [oauth.allowInsecureRequests]: true } as const;
const PAR_PREFIX = 'urn:ietf:params:oauth:request_uri:';
const LOGIN_UI = 'https://login.example.com/signin';

const webApp = (s: RpSetup) =>
  oidc.discovery(new URL(s.issuer), 'web-app', undefined, oidc.ClientSecretBasic(s.secret), {
    execute: [oidc.allowInsecureRequests],
  });

async function flowParams() {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const params = {
    redirect_uri: REDIRECT,
    scope: 'openid profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  };
  return { verifier, state, nonce, params };
}

const pushedRows = (s: RpSetup) =>
  count(s.h, 'select 1 from pushed_authorization_requests where realm_id = $1', [s.realm.id]);
const transactions = (s: RpSetup) =>
  count(s.h, 'select 1 from signin_transactions where realm_id = $1', [s.realm.id]);

/** The headless start with these members, as the login page would send them. */
const headlessStart = (s: RpSetup, body: Record<string, unknown>) =>
  s.h
    .get(`/api/v1/realms/${s.realm.name}/auth/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    .then(json);

/** A direct 400 at the authorization endpoint with this OAuth error; no transaction, nothing issued. */
async function refusedAtAuthorize(s: RpSetup, name: string, params: URLSearchParams, error: string) {
  const before = await issuedSoFar(s.h, s.realm);
  const r = await authorize(s.h, s.realm.name, params);
  const body = (await r.json()) as { code?: string; error?: string };
  assert.equal(r.status, 400, `${name}: ${JSON.stringify(body)}`);
  assert.equal(r.headers.get('location'), null, `${name}: must not redirect`);
  assert.equal(body.code, 'invalid_request', name);
  assert.equal(body.error, error, name);
  assert.deepEqual(await issuedSoFar(s.h, s.realm), before, `${name}: something was issued`);
}

/** A web client signing its request objects (and client assertions) with an ES256 key. */
async function signingClient(s: RpSetup) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  await s.h.createClient(s.realm, {
    clientId: 'signer-app',
    name: 'Signer App',
    type: 'web',
    redirectUris: [REDIRECT],
    tokenEndpointAuthMethod: 'private_key_jwt',
    jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', use: 'sig', alg: 'ES256' }] },
  });
  const config = await oidc.discovery(
    new URL(s.issuer),
    'signer-app',
    undefined,
    oidc.PrivateKeyJwt({ key: privateKey, kid: 'k1' }),
    { execute: [oidc.allowInsecureRequests] },
  );
  return { privateKey, config };
}

test('discovery advertises the PAR endpoint, request objects and the realm requirement', async (t) => {
  const s = await rpSetup(t);
  const m = (await webApp(s)).serverMetadata();
  assert.equal(m.pushed_authorization_request_endpoint, `${s.issuer}/oauth/par`);
  assert.equal(m.require_pushed_authorization_requests, false);
  assert.equal(m.request_parameter_supported, true);
  assert.deepEqual(m.request_object_signing_alg_values_supported, ['RS256', 'PS256', 'ES256', 'EdDSA']);
  // Only this service's own PAR URNs are taken, never a URL to fetch.
  assert.equal(m.request_uri_parameter_supported, false);
  await s.h.setPolicy(s.realm, { interaction: { require_pushed_authorization_requests: true } });
  const after = (await webApp(s)).serverMetadata();
  assert.equal(after.require_pushed_authorization_requests, true);
});

test('openid-client: a code flow whose parameters were pushed first; the request_uri works once', async (t) => {
  const s = await rpSetup(t);
  const config = await webApp(s);
  const f = await flowParams();
  const url = await oidc.buildAuthorizationUrlWithPAR(config, f.params);
  assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
  const requestUri = url.searchParams.get('request_uri') ?? '';
  assert.ok(requestUri.startsWith(PAR_PREFIX), requestUri);
  const [stored] = await rows(s.h, 'select * from pushed_authorization_requests where realm_id = $1', [
    s.realm.id,
  ]);
  assert.ok(stored);
  assert.ok(!JSON.stringify(stored).includes(requestUri.slice(PAR_PREFIX.length)), 'kept as a digest only');
  assert.equal(stored.client_id, 'web-app');
  assert.equal(new Date(stored.expires_at).getTime() - new Date(stored.created_at).getTime(), 60_000);

  const callback = await signInAt(s.h, s.realm, url);
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: f.verifier,
    expectedState: f.state,
    expectedNonce: f.nonce,
  });
  assert.equal(tokens.scope, 'openid profile');
  assert.equal(tokens.claims()?.sub, s.user.id);
  assert.equal(await pushedRows(s), 0, 'spent by its use');

  // A second use is refused and starts nothing.
  const before = await transactions(s);
  const again = await headlessStart(s, startBodyOf(url));
  assert.equal(again.status, 400, JSON.stringify(again.body));
  assert.equal(again.body.code, 'invalid_request');
  assert.equal(again.body.error, 'invalid_request_uri');
  assert.equal(await transactions(s), before);
});

test('oauth4webapi: a pushed request at the browser authorization endpoint', async (t) => {
  const s = await rpSetup(t);
  await s.h.setPolicy(s.realm, { interaction: { login_ui_url: LOGIN_UI } });
  const issuer = new URL(s.issuer);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  const client = { client_id: 'web-app' };
  const f = await flowParams();
  const response = await oauth.pushedAuthorizationRequest(
    as,
    client,
    oauth.ClientSecretBasic(s.secret),
    { ...f.params, response_type: 'code' },
    insecure,
  );
  assert.equal(response.status, 201);
  const pushed = await oauth.processPushedAuthorizationResponse(as, client, response);
  assert.equal(pushed.expires_in, 60);
  const query = new URLSearchParams({ client_id: 'web-app', request_uri: pushed.request_uri });
  const r = await authorize(s.h, s.realm.name, query);
  assert.equal(r.status, 303, await r.clone().text());
  const id = new URL(r.headers.get('location') ?? '').searchParams.get('transaction_id');
  const [tx] = await rows(s.h, 'select * from signin_transactions where realm_id = $1 and id = $2', [
    s.realm.id,
    id,
  ]);
  // The transaction carries what was pushed.
  assert.equal(tx?.redirect_uri, REDIRECT);
  assert.equal(tx?.state, f.state);
  assert.equal(tx?.nonce, f.nonce);
  assert.deepEqual(tx?.scopes, ['openid', 'profile']);
  await refusedAtAuthorize(s, 'used twice', query, 'invalid_request_uri');
});

test('a request_uri that is unknown, expired or pushed by another client is refused', async (t) => {
  const s = await rpSetup(t);
  await s.h.createClient(s.realm, {
    clientId: 'other-app',
    name: 'Other',
    type: 'spa',
    redirectUris: [REDIRECT],
    tokenEndpointAuthMethod: 'none',
  });
  const config = await webApp(s);
  const q = (requestUri: string, clientId = 'web-app') =>
    new URLSearchParams({ client_id: clientId, request_uri: requestUri });
  await refusedAtAuthorize(s, 'unknown', q(`${PAR_PREFIX}nothing-here`), 'invalid_request_uri');
  await refusedAtAuthorize(
    s,
    'not a PAR urn',
    q('https://app.example.com/request.jwt'),
    'invalid_request_uri',
  );

  const foreign = await oidc.buildAuthorizationUrlWithPAR(config, (await flowParams()).params);
  const foreignUri = foreign.searchParams.get('request_uri') ?? '';
  await refusedAtAuthorize(s, 'another client', q(foreignUri, 'other-app'), 'invalid_request_uri');
  const viaStart = await headlessStart(s, { client_id: 'other-app', request_uri: foreignUri });
  assert.equal(viaStart.status, 400);
  assert.equal(viaStart.body.error, 'invalid_request_uri');

  const expiring = await oidc.buildAuthorizationUrlWithPAR(config, (await flowParams()).params);
  s.h.clock.advance(61_000);
  await refusedAtAuthorize(
    s,
    'expired',
    q(expiring.searchParams.get('request_uri') ?? ''),
    'invalid_request_uri',
  );
  await assertNothingIssued(s.h, s.realm);
});

test('the PAR endpoint checks the client and the parameters as the authorization endpoint does', async (t) => {
  const s = await rpSetup(t);
  const config = await webApp(s);
  const push = async (params: Record<string, string>) => {
    const { params: base } = await flowParams();
    return oidc.buildAuthorizationUrlWithPAR(config, { ...base, ...params });
  };
  const refused = (error: string) => (e: unknown) => {
    assert.ok(e instanceof oidc.ResponseBodyError, `expected a ResponseBodyError, got ${String(e)}`);
    assert.equal(e.error, error);
    return true;
  };
  await assert.rejects(push({ redirect_uri: 'https://evil.example.com/cb' }), refused('invalid_request'));
  await assert.rejects(push({ response_type: 'token' }), refused('unsupported_response_type'));
  await assert.rejects(push({ code_challenge_method: 'plain' }), refused('invalid_request'));
  await assert.rejects(push({ scope: 'openid "x"' }), refused('invalid_scope'));
  await assert.rejects(push({ request_uri: `${PAR_PREFIX}x` }), refused('invalid_request'));
  // A client_id in the body that is not the authenticated client.
  const { params: base } = await flowParams();
  const mismatch = await fetch(`${s.issuer}/oauth/par`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`web-app:${s.secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ ...base, response_type: 'code', client_id: 'other-app' }),
  });
  assert.equal(mismatch.status, 400);
  assert.equal(((await mismatch.json()) as { error: string }).error, 'invalid_request');
  const wrongSecret = await oidc.discovery(
    new URL(s.issuer),
    'web-app',
    undefined,
    oidc.ClientSecretBasic('not-the-secret'),
    { execute: [oidc.allowInsecureRequests] },
  );
  await assert.rejects(
    oidc.buildAuthorizationUrlWithPAR(wrongSecret, (await flowParams()).params),
    (e: unknown) => {
      // 401 with a Basic challenge (RFC 6749 section 5.2), as at the token endpoint.
      assert.ok(e instanceof oidc.WWWAuthenticateChallengeError, String(e));
      assert.equal(e.status, 401);
      return true;
    },
  );
  assert.equal(await pushedRows(s), 0, 'nothing was stored');
  await assertNothingIssued(s.h, s.realm);
});

test('openid-client: a signed request object, pushed or sent to the authorization endpoint', async (t) => {
  const s = await rpSetup(t);
  await s.h.setPolicy(s.realm, { interaction: { login_ui_url: LOGIN_UI } });
  const { privateKey, config } = await signingClient(s);
  const f = await flowParams();
  const jar = await oidc.buildAuthorizationUrlWithJAR(config, f.params, { key: privateKey, kid: 'k1' });
  assert.deepEqual([...jar.searchParams.keys()].sort(), ['client_id', 'request']);

  // At the authorization endpoint: the object's parameters make the transaction.
  const r = await authorize(s.h, s.realm.name, jar.searchParams);
  assert.equal(r.status, 303, await r.clone().text());
  const id = new URL(r.headers.get('location') ?? '').searchParams.get('transaction_id');
  const [tx] = await rows(s.h, 'select * from signin_transactions where realm_id = $1 and id = $2', [
    s.realm.id,
    id,
  ]);
  assert.equal(tx?.state, f.state);
  assert.equal(tx?.client_id, 'signer-app');

  // Pushed (RFC 9126 section 3), then a full code flow.
  const g = await flowParams();
  const signed = await oidc.buildAuthorizationUrlWithJAR(config, g.params, { key: privateKey, kid: 'k1' });
  const url = await oidc.buildAuthorizationUrlWithPAR(config, signed.searchParams);
  const callback = await signInAt(s.h, s.realm, url);
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: g.verifier,
    expectedState: g.state,
    expectedNonce: g.nonce,
  });
  assert.equal(tokens.claims()?.aud, 'signer-app');
});

test('bad request objects are refused with invalid_request_object and start nothing', async (t) => {
  const s = await rpSetup(t);
  const { privateKey, config } = await signingClient(s);
  const { params } = await flowParams();
  const claims = { ...params, response_type: 'code', client_id: 'signer-app' };
  const now = Math.floor(Date.now() / 1000);
  const sign = (payload: Record<string, unknown>, exp = now + 60, aud = s.issuer) =>
    new SignJWT(payload)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer('signer-app')
      .setAudience(aud)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .sign(privateKey);
  const at = (request: string, clientId = 'signer-app') =>
    new URLSearchParams({ client_id: clientId, request });
  const unsigned = new UnsecuredJWT(claims)
    .setIssuer('signer-app')
    .setAudience(s.issuer)
    .setExpirationTime(now + 60)
    .encode();
  await refusedAtAuthorize(s, 'alg none', at(unsigned), 'invalid_request_object');
  await refusedAtAuthorize(
    s,
    'other audience',
    at(await sign(claims, now + 60, 'https://elsewhere.example.com')),
    'invalid_request_object',
  );
  await refusedAtAuthorize(
    s,
    'no exp',
    at(
      await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer('signer-app')
        .setAudience(s.issuer)
        .sign(privateKey),
    ),
    'invalid_request_object',
  );
  await refusedAtAuthorize(
    s,
    'exp an hour away',
    at(await sign(claims, now + 3600)),
    'invalid_request_object',
  );
  await refusedAtAuthorize(s, 'expired', at(await sign(claims, now - 3600)), 'invalid_request_object');
  await refusedAtAuthorize(
    s,
    'client_id differs',
    at(await sign({ ...claims, client_id: 'web-app' })),
    'invalid_request_object',
  );
  // web-app has no registered keys: nothing can verify an object sent in its name.
  await refusedAtAuthorize(
    s,
    'client without keys',
    at(await sign(claims), 'web-app'),
    'invalid_request_object',
  );
  await refusedAtAuthorize(s, 'not a JWT', at('not-a-jwt'), 'invalid_request_object');

  // At the PAR endpoint too, in the endpoint's JSON error form.
  await assert.rejects(
    oidc.buildAuthorizationUrlWithPAR(config, { client_id: 'signer-app', request: unsigned }),
    (e: unknown) => {
      assert.ok(e instanceof oidc.ResponseBodyError, String(e));
      assert.equal(e.error, 'invalid_request_object');
      return true;
    },
  );
  assert.equal(await pushedRows(s), 0);
  await assertNothingIssued(s.h, s.realm);
});

async function requirePushed(t: TestContext, how: 'client' | 'realm') {
  const s = await rpSetup(t);
  if (how === 'client') {
    const admin = await apiCaller(s.h, s.realm);
    const patched = await admin.call('PATCH', '/clients/web-app', {
      require_pushed_authorization_requests: true,
    });
    assert.equal(patched.status, 200, await patched.clone().text());
    const body = (await patched.json()) as Record<string, unknown>;
    assert.equal(body.require_pushed_authorization_requests, true);
  } else {
    await s.h.setPolicy(s.realm, { interaction: { require_pushed_authorization_requests: true } });
    // The built-in identity-cli still signs administrators in without PAR.
    const admin = await apiCaller(s.h, s.realm);
    assert.equal((await admin.call('GET', '/clients/web-app')).status, 200);
  }
  const config = await webApp(s);
  const f = await flowParams();
  const plain = oidc.buildAuthorizationUrl(config, f.params);
  await refusedAtAuthorize(s, `${how}: plain request`, plain.searchParams, 'invalid_request');
  const before = await issuedSoFar(s.h, s.realm);
  const start = await headlessStart(s, startBodyOf(plain));
  assert.equal(start.status, 400, JSON.stringify(start.body));
  assert.equal(start.body.error, 'invalid_request');
  assert.deepEqual(await issuedSoFar(s.h, s.realm), before);
  // A pushed request is still welcome.
  const url = await oidc.buildAuthorizationUrlWithPAR(config, f.params);
  const callback = await signInAt(s.h, s.realm, url);
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: f.verifier,
    expectedState: f.state,
    expectedNonce: f.nonce,
  });
  assert.ok(tokens.access_token);
}

test('a client that must push: plain requests are refused, pushed ones go through', (t) =>
  requirePushed(t, 'client'));

test('a realm whose policy requires pushed requests refuses plain ones for every client', (t) =>
  requirePushed(t, 'realm'));
