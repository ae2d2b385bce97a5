// The realm as a relying party built on openid-client 6 sees it: discovery, the code flow with
// PKCE (state, RFC 9207 iss, nonce, ID token signature through the JWKS), refresh rotation,
// client credentials (RS256 and ES256 realms), token exchange, introspection and revocation,
// UserInfo, JARM, and RP-initiated logout. Every protocol message goes through the library's own
// API; only the login page is replaced by the headless sign-in (rp-kit.ts).
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { decodeJwt, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { clientSecret, seedGrant, seedResource, seedServiceClient } from '../../harness/token-kit.ts';
import {
  ACCESS_TOKEN_TYPE,
  addIntrospector,
  expectedAtHash,
  INVENTORY,
  ORDERS,
  POST_LOGOUT,
  REDIRECT,
  type RpSetup,
  rpSetup,
  signInAt,
  TOKEN_EXCHANGE,
} from './rp-kit.ts';

type Extra = (config: oidc.Configuration) => void;

/** A Configuration from the realm's metadata; ID token signatures are always checked. */
function relyingParty(s: RpSetup, clientId: string, secret: string, extra: Extra[] = [], opts = {}) {
  return oidc.discovery(new URL(s.issuer), clientId, undefined, oidc.ClientSecretBasic(secret), {
    execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks, ...extra],
    ...opts,
  });
}

const webApp = (s: RpSetup, extra: Extra[] = []) => relyingParty(s, 'web-app', s.secret, extra);

interface Attempt {
  callback: URL;
  verifier: string;
  state: string;
  nonce: string;
}

/** Authorization URL from the library, then the sign-in; returns the callback and the checks. */
async function authorize(
  s: RpSetup,
  config: oidc.Configuration,
  params: Record<string, string> = {},
): Promise<Attempt> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid profile email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...params,
  });
  return { callback: await signInAt(s.h, s.realm, url), verifier, state, nonce };
}

const redeem = (config: oidc.Configuration, a: Attempt) =>
  oidc.authorizationCodeGrant(config, a.callback, {
    pkceCodeVerifier: a.verifier,
    expectedState: a.state,
    expectedNonce: a.nonce,
  });

async function codeFlow(s: RpSetup, config: oidc.Configuration, params: Record<string, string> = {}) {
  const attempt = await authorize(s, config, params);
  return { attempt, tokens: await redeem(config, attempt) };
}

const oauthError =
  (error: string, status = 400) =>
  (e: unknown) => {
    assert.ok(e instanceof oidc.ResponseBodyError, `expected a ResponseBodyError, got ${String(e)}`);
    assert.equal(e.error, error);
    assert.equal(e.status, status);
    return true;
  };

const bearerError = (error: string) => (e: unknown) => {
  assert.ok(e instanceof oidc.WWWAuthenticateChallengeError, `expected a challenge, got ${String(e)}`);
  assert.equal(e.cause[0]?.scheme, 'bearer');
  assert.equal(e.cause[0]?.parameters.error, error);
  return true;
};

/** A ClientError with its code; `reason` matches the underlying oauth4webapi error's message. */
const clientError = (code: string, reason?: RegExp) => (e: unknown) => {
  assert.ok(e instanceof oidc.ClientError, `expected a ClientError, got ${String(e)}`);
  assert.equal(e.code, code);
  if (reason) assert.match(e.cause instanceof Error ? e.cause.message : e.message, reason);
  return true;
};

/** A resource, the web client's grant on it and a confidential resource-server client introspecting it. */
async function ordersResource(s: RpSetup, opts: { tokenFormat?: 'jwt' | 'opaque' } = {}) {
  const resource = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'], ...opts });
  await seedGrant(s.h, s.realm, s.client, resource, { scopes: ['orders:read'] });
  const rs = await seedServiceClient(s.h, s.realm, 'orders-rs');
  await addIntrospector(s.h, s.realm, resource, rs.client);
  return { resource, rs: await relyingParty(s, 'orders-rs', rs.creds.secret) };
}

test('discovery: the OpenID Connect and the RFC 8414 locations both give metadata for the issuer', async (t) => {
  const s = await rpSetup(t);
  for (const algorithm of ['oidc', 'oauth2'] as const) {
    const config = await relyingParty(s, 'web-app', s.secret, [], { algorithm });
    const m = config.serverMetadata();
    assert.equal(m.issuer, s.issuer, algorithm);
    assert.equal(m.token_endpoint, `${s.issuer}/oauth/token`);
    assert.equal(m.jwks_uri, `${s.issuer}/jwks`);
    assert.ok(m.supportsPKCE(), 'S256 is advertised');
    assert.equal(m.authorization_response_iss_parameter_supported, true);
    assert.deepEqual(m.id_token_signing_alg_values_supported, ['RS256']);
  }
});

test('code flow with PKCE: the library checks state, iss, nonce and the ID token signature', async (t) => {
  const s = await rpSetup(t);
  const config = await webApp(s);
  const { attempt, tokens } = await codeFlow(s, config);
  // RFC 9207 section 2: the callback names the issuer the library discovered.
  assert.equal(attempt.callback.searchParams.get('iss'), s.issuer);
  assert.equal(attempt.callback.searchParams.get('state'), attempt.state);
  assert.equal(tokens.token_type, 'bearer');
  assert.equal(tokens.scope, 'openid profile email');
  assert.ok(tokens.refresh_token);
  const id = tokens.claims();
  assert.ok(id);
  assert.equal(id.iss, s.issuer);
  assert.equal(id.aud, 'web-app');
  assert.equal(id.sub, s.user.id);
  assert.equal(id.nonce, attempt.nonce);
  // Neither library checks at_hash on a code flow (OIDC Core 3.1.3.8 makes it optional).
  assert.equal(id.at_hash, expectedAtHash(tokens.id_token ?? '', tokens.access_token));
  const at = await jwtVerify(tokens.access_token, s.jwks, {
    issuer: s.issuer,
    audience: `${s.issuer}/oauth/userinfo`,
    typ: 'at+jwt',
  });
  assert.equal(at.payload.sub, s.user.id);
  assert.equal(at.payload.client_id, 'web-app');
  assert.equal(at.payload.sid, id.sid);
});

test('max_age: the ID token carries auth_time and the library checks it against max_age', async (t) => {
  const s = await rpSetup(t);
  const config = await webApp(s);
  const attempt = await authorize(s, config, { max_age: '300' });
  const tokens = await oidc.authorizationCodeGrant(config, attempt.callback, {
    pkceCodeVerifier: attempt.verifier,
    expectedState: attempt.state,
    expectedNonce: attempt.nonce,
    maxAge: 300,
  });
  const authTime = tokens.claims()?.auth_time;
  assert.equal(typeof authTime, 'number');
  assert.ok(Math.abs((authTime ?? 0) - Date.now() / 1000) < 60);
});

test('refresh: the library gets a rotated refresh token; the old one is then invalid_grant', async (t) => {
  const s = await rpSetup(t);
  const config = await webApp(s);
  const { tokens } = await codeFlow(s, config);
  const first = tokens.refresh_token ?? '';
  const refreshed = await oidc.refreshTokenGrant(config, first);
  assert.ok(refreshed.refresh_token);
  assert.notEqual(refreshed.refresh_token, first);
  // OIDC Core 12.2: the refreshed ID token names the same issuer, subject, audience and auth_time.
  const before = tokens.claims();
  const after = refreshed.claims();
  assert.ok(before && after, 'both ID tokens passed the library checks');
  for (const claim of ['iss', 'sub', 'aud', 'auth_time'] as const)
    assert.deepEqual(after[claim], before[claim], claim);
  assert.equal(after.sub, s.user.id);
  assert.equal(after.nonce, undefined);
  await assert.rejects(oidc.refreshTokenGrant(config, first), oauthError('invalid_grant'));
});

test('client_credentials with a resource in an RS256 realm', async (t) => {
  const s = await rpSetup(t);
  const svc = await seedServiceClient(s.h, s.realm, 'billing');
  const res = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read', 'orders:write'] });
  await seedGrant(s.h, s.realm, svc.client, res, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const config = await relyingParty(s, 'billing', svc.creds.secret);
  const tokens = await oidc.clientCredentialsGrant(config, { resource: ORDERS, scope: 'orders:read' });
  assert.equal(tokens.refresh_token, undefined);
  assert.equal(tokens.id_token, undefined);
  const at = await jwtVerify(tokens.access_token, s.jwks, {
    issuer: s.issuer,
    audience: ORDERS,
    typ: 'at+jwt',
    algorithms: ['RS256'],
  });
  assert.equal(at.payload.sub, svc.principalId);
  assert.equal(at.payload.client_id, 'billing');
  assert.equal(at.payload.scope, 'orders:read');
  await assert.rejects(
    oidc.clientCredentialsGrant(config, { resource: ORDERS, scope: 'orders:write' }),
    oauthError('invalid_scope'),
  );
});

test('an ES256 realm: discovery, code flow ID token and client_credentials token all ES256', async (t) => {
  const s = await rpSetup(t, { overrides: { 'keys.signing_algorithm': 'ES256' } });
  const config = await webApp(s);
  assert.deepEqual(config.serverMetadata().id_token_signing_alg_values_supported, ['ES256']);
  const { tokens } = await codeFlow(s, config);
  const idToken = tokens.id_token ?? '';
  assert.equal((await jwtVerify(idToken, s.jwks, { algorithms: ['ES256'] })).protectedHeader.alg, 'ES256');
  assert.equal(tokens.claims()?.at_hash, expectedAtHash(idToken, tokens.access_token));
  const svc = await seedServiceClient(s.h, s.realm, 'billing');
  const res = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, svc.client, res, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const cc = await oidc.clientCredentialsGrant(await relyingParty(s, 'billing', svc.creds.secret), {
    resource: ORDERS,
  });
  const at = await jwtVerify(cc.access_token, s.jwks, {
    issuer: s.issuer,
    audience: ORDERS,
    typ: 'at+jwt',
    algorithms: ['ES256'],
  });
  assert.equal(at.payload.sub, svc.principalId);
});

test('token exchange through genericGrantRequest: the user stays the subject, the service acts', async (t) => {
  const s = await rpSetup(t);
  const orders = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  const inventory = await seedResource(s.h, s.realm, {
    audience: INVENTORY,
    scopes: ['stock:read', 'stock:write'],
  });
  await seedGrant(s.h, s.realm, s.client, orders, { scopes: ['orders:read'] });
  const svc = await seedServiceClient(s.h, s.realm, 'orders-api', [TOKEN_EXCHANGE]);
  await seedGrant(s.h, s.realm, svc.client, inventory, {
    scopes: ['stock:read', 'stock:write'],
    exchange: { acceptFrom: [ORDERS], maxScopes: ['stock:read'] },
  });
  const { tokens } = await codeFlow(s, await webApp(s), { scope: 'openid orders:read', resource: ORDERS });
  assert.deepEqual(decodeJwt(tokens.access_token).aud, [ORDERS, `${s.issuer}/oauth/userinfo`]);
  const api = await relyingParty(s, 'orders-api', svc.creds.secret);
  const request = {
    subject_token: tokens.access_token,
    subject_token_type: ACCESS_TOKEN_TYPE,
    resource: INVENTORY,
  };
  const exchanged = await oidc.genericGrantRequest(api, TOKEN_EXCHANGE, { ...request, scope: 'stock:read' });
  assert.equal(exchanged.issued_token_type, ACCESS_TOKEN_TYPE);
  assert.equal(exchanged.token_type, 'bearer');
  const at = await jwtVerify(exchanged.access_token, s.jwks, {
    issuer: s.issuer,
    audience: INVENTORY,
    typ: 'at+jwt',
  });
  assert.equal(at.payload.sub, s.user.id);
  assert.deepEqual(at.payload.act, { sub: svc.principalId });
  assert.equal(at.payload.scope, 'stock:read');
  await assert.rejects(
    oidc.genericGrantRequest(api, TOKEN_EXCHANGE, { ...request, scope: 'stock:write' }),
    oauthError('invalid_scope'),
  );
});

test('introspection by the resource server, then revocation by the client: active, then inactive', async (t) => {
  const s = await rpSetup(t);
  const { rs } = await ordersResource(s);
  const web = await webApp(s);
  const { tokens } = await codeFlow(s, web, { scope: 'openid orders:read', resource: ORDERS });
  const active = await oidc.tokenIntrospection(rs, tokens.access_token);
  assert.equal(active.active, true);
  assert.equal(active.sub, s.user.id);
  // The grant has openid: the resource's audience first, then UserInfo's (docs/tokens.md).
  assert.deepEqual(active.aud, [ORDERS, `${s.issuer}/oauth/userinfo`]);
  assert.equal(active.scope, 'openid orders:read');
  assert.equal(active.client_id, 'web-app');
  assert.equal(active.iss, s.issuer);
  assert.equal(active.token_type, 'Bearer');
  await oidc.tokenRevocation(web, tokens.access_token);
  assert.deepEqual(await oidc.tokenIntrospection(rs, tokens.access_token), { active: false });
  // Revoking the refresh token ends its family: the library's refresh is then invalid_grant.
  await oidc.tokenRevocation(web, tokens.refresh_token ?? '');
  await assert.rejects(oidc.refreshTokenGrant(web, tokens.refresh_token ?? ''), oauthError('invalid_grant'));
});

test('introspection of an opaque access token, before and after revocation', async (t) => {
  const s = await rpSetup(t);
  const { rs } = await ordersResource(s, { tokenFormat: 'opaque' });
  const web = await webApp(s);
  const { tokens } = await codeFlow(s, web, { scope: 'openid orders:read', resource: ORDERS });
  assert.match(tokens.access_token, /^pa_at_/);
  const active = await oidc.tokenIntrospection(rs, tokens.access_token);
  assert.equal(active.active, true);
  assert.equal(active.sub, s.user.id);
  assert.equal(active.aud, ORDERS);
  await oidc.tokenRevocation(web, tokens.access_token);
  assert.equal((await oidc.tokenIntrospection(rs, tokens.access_token)).active, false);
});

test('UserInfo through fetchUserInfo with the expected subject; a revoked token is invalid_token', async (t) => {
  const s = await rpSetup(t);
  const config = await webApp(s);
  const { tokens } = await codeFlow(s, config);
  const sub = tokens.claims()?.sub ?? '';
  const info = await oidc.fetchUserInfo(config, tokens.access_token, sub);
  assert.equal(info.sub, s.user.id);
  assert.equal(info.email, 'alice@example.com');
  assert.equal(info.email_verified, true);
  assert.equal(info.name, 'Alice Example');
  await assert.rejects(
    oidc.fetchUserInfo(config, tokens.access_token, 'someone-else'),
    clientError('OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED'),
  );
  await oidc.tokenRevocation(config, tokens.access_token);
  await assert.rejects(oidc.fetchUserInfo(config, tokens.access_token, sub), bearerError('invalid_token'));
});

const PROFILE_AND_EMAIL = [
  'name',
  'given_name',
  'family_name',
  'locale',
  'updated_at',
  'email',
  'email_verified',
];

test('ID token: the claims of the granted scopes, as UserInfo answers them; id_token_claims minimal leaves them out', async (t) => {
  const s = await rpSetup(t);
  await s.h.ctx.db.query('update users set attributes = $3 where realm_id = $1 and id = $2', [
    s.realm.id,
    s.user.id,
    JSON.stringify({ given_name: 'Alice', family_name: 'Example', locale: 'de' }),
  ]);
  const config = await webApp(s);
  const { tokens } = await codeFlow(s, config);
  const id = tokens.claims();
  assert.ok(id, 'the library verified the ID token');
  const info = await oidc.fetchUserInfo(config, tokens.access_token, id.sub);
  // What Auth.js and express-openid-connect read as the user: the ID token alone.
  assert.equal(id.name, 'Alice Example');
  assert.equal(id.given_name, 'Alice');
  assert.equal(id.family_name, 'Example');
  assert.equal(id.locale, 'de');
  assert.equal(typeof id.updated_at, 'number');
  assert.equal(id.email, 'alice@example.com');
  assert.equal(id.email_verified, true);
  for (const claim of PROFILE_AND_EMAIL)
    assert.deepEqual(id[claim], info[claim], `${claim} as UserInfo answers it`);
  assert.equal(id.phone_number, undefined, 'phone was not granted');
  const refreshed = (await oidc.refreshTokenGrant(config, tokens.refresh_token ?? '')).claims();
  assert.equal(refreshed?.email, 'alice@example.com', 'a refreshed ID token carries them too');

  // Only what was granted: without profile, no profile claims.
  const emailOnly = (await codeFlow(s, config, { scope: 'openid email' })).tokens.claims();
  assert.equal(emailOnly?.email, 'alice@example.com');
  assert.equal(emailOnly?.name, undefined);
  assert.equal(emailOnly?.updated_at, undefined);

  await s.h.ctx.db.query("update clients set id_token_claims = 'minimal' where realm_id = $1 and id = $2", [
    s.realm.id,
    s.client.id,
  ]);
  const minimal = await codeFlow(s, config);
  const bare = minimal.tokens.claims();
  assert.ok(bare);
  for (const claim of PROFILE_AND_EMAIL)
    assert.equal(bare[claim], undefined, `${claim} left out of a minimal ID token`);
  assert.equal(bare.sub, s.user.id);
  const still = await oidc.fetchUserInfo(config, minimal.tokens.access_token, bare.sub);
  assert.equal(still.email, 'alice@example.com', 'UserInfo answers the same claims either way');
  assert.equal(still.given_name, 'Alice');
});

test('JARM: with useJwtResponseMode the library verifies the signed response and redeems its code', async (t) => {
  const s = await rpSetup(t);
  const config = await webApp(s, [oidc.useJwtResponseMode]);
  const attempt = await authorize(s, config);
  assert.deepEqual([...attempt.callback.searchParams.keys()], ['response']);
  const tokens = await redeem(config, attempt);
  assert.equal(tokens.claims()?.sub, s.user.id);
  const response = await jwtVerify(attempt.callback.searchParams.get('response') ?? '', s.jwks, {
    issuer: s.issuer,
    audience: 'web-app',
  });
  assert.equal(response.payload.state, attempt.state);
});

test('the library refuses a wrong nonce, a wrong state, a missing iss and a forged ID token signature', async (t) => {
  const s = await rpSetup(t);
  const config = await webApp(s);

  const wrongNonce = await authorize(s, config);
  await assert.rejects(
    redeem(config, { ...wrongNonce, nonce: oidc.randomNonce() }),
    clientError('OAUTH_JWT_CLAIM_COMPARISON_FAILED'),
  );

  // State and iss are checked before the code is sent, so the same callback still redeems after.
  const attempt = await authorize(s, config);
  await assert.rejects(
    redeem(config, { ...attempt, state: oidc.randomState() }),
    clientError('OAUTH_INVALID_RESPONSE', /"state"/),
  );
  const noIss = new URL(attempt.callback);
  noIss.searchParams.delete('iss');
  await assert.rejects(
    redeem(config, { ...attempt, callback: noIss }),
    clientError('OAUTH_INVALID_RESPONSE', /"iss" \(issuer\) missing/),
  );
  const otherIss = new URL(attempt.callback);
  otherIss.searchParams.set('iss', `${s.issuer}x`);
  await assert.rejects(
    redeem(config, { ...attempt, callback: otherIss }),
    clientError('OAUTH_INVALID_RESPONSE', /unexpected "iss"/),
  );
  assert.equal((await redeem(config, attempt)).claims()?.sub, s.user.id);

  // The signature check is live: one flipped signature byte in the token response is caught.
  const forging = await webApp(s);
  forging[oidc.customFetch] = async (url, init) => {
    const res = await fetch(url, init);
    if (!String(url).endsWith('/oauth/token')) return res;
    const body = (await res.json()) as { id_token: string };
    const [h, p, sig = ''] = String(body.id_token).split('.');
    const bytes = Buffer.from(sig, 'base64url');
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    body.id_token = `${h}.${p}.${bytes.toString('base64url')}`;
    return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
  };
  const forged = await authorize(s, forging);
  await assert.rejects(
    redeem(forging, forged),
    clientError('OAUTH_INVALID_RESPONSE', /JWT signature verification failed/),
  );
});

test('RP-initiated logout through buildEndSessionUrl: back to the registered URI with state, tokens end', async (t: TestContext) => {
  const s = await rpSetup(t);
  const config = await webApp(s);
  const { tokens } = await codeFlow(s, config);
  const url = oidc.buildEndSessionUrl(config, {
    id_token_hint: tokens.id_token ?? '',
    post_logout_redirect_uri: POST_LOGOUT,
    state: 'bye-1',
  });
  assert.equal(`${url.origin}${url.pathname}`, `${s.issuer}/oauth/logout`);
  assert.equal(url.searchParams.get('client_id'), 'web-app');
  const res = await fetch(url, { redirect: 'manual' });
  assert.equal(res.status, 303, await res.clone().text());
  assert.equal(res.headers.get('location'), `${POST_LOGOUT}?state=bye-1`);
  await assert.rejects(
    oidc.refreshTokenGrant(config, tokens.refresh_token ?? ''),
    oauthError('invalid_grant'),
  );
  const sub = tokens.claims()?.sub ?? '';
  await assert.rejects(oidc.fetchUserInfo(config, tokens.access_token, sub), bearerError('invalid_token'));
  // An unregistered return URI is refused and nothing redirects.
  const stray = oidc.buildEndSessionUrl(config, { post_logout_redirect_uri: 'https://evil.example.com/' });
  const refused = await fetch(stray, { redirect: 'manual' });
  assert.equal(refused.status, 400);
  assert.equal(refused.headers.get('location'), null);
});

test('client authentication as advertised: client_secret_post, a public client (none), a wrong secret', async (t) => {
  const s = await rpSetup(t);
  // client_secret_post, for a service client registered with it.
  const poster = await s.h.createClient(s.realm, {
    clientId: 'poster',
    name: 'Poster',
    type: 'service',
    redirectUris: [],
    grantTypes: ['client_credentials'],
    tokenEndpointAuthMethod: 'client_secret_post',
  });
  await s.h.ctx.db.query(
    `insert into service_principals (realm_id, id, client_row_id, state, created_at, updated_at)
     values ($1, 'spr_poster', $2, 'active', now(), now())`,
    [s.realm.id, poster.id],
  );
  const res = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, poster, res, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const posterSecret = await clientSecret(s.h, s.realm, poster);
  const post = await oidc.discovery(
    new URL(s.issuer),
    'poster',
    undefined,
    oidc.ClientSecretPost(posterSecret),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
  const cc = await oidc.clientCredentialsGrant(post, { resource: ORDERS });
  assert.equal(decodeJwt(cc.access_token).sub, 'spr_poster');

  // A single-page app: no secret, PKCE only.
  await s.h.createClient(s.realm, {
    clientId: 'spa-app',
    name: 'SPA',
    type: 'spa',
    redirectUris: [REDIRECT],
    allowedOrigins: ['https://app.example.com'],
  });
  const spa = await oidc.discovery(new URL(s.issuer), 'spa-app', undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
  });
  const { tokens } = await codeFlow(s, spa);
  assert.equal(tokens.claims()?.aud, 'spa-app');

  // A wrong secret: 401 with the Basic challenge the library reports (RFC 6749 section 5.2).
  const wrong = await relyingParty(s, 'web-app', 'pa_cs_wrong');
  await assert.rejects(oidc.refreshTokenGrant(wrong, 'pa_rt_whatever'), (e: unknown) => {
    assert.ok(e instanceof oidc.WWWAuthenticateChallengeError, String(e));
    assert.equal(e.status, 401);
    assert.equal(e.cause[0]?.scheme, 'basic');
    return true;
  });
});

test('decision D19: basic-registered clients configured for client_secret_post at token, introspection and revocation', async (t) => {
  const s = await rpSetup(t);
  const { resource } = await ordersResource(s);
  // The same registrations, the libraries configured for the other secret method.
  const rsCreds = await seedServiceClient(s.h, s.realm, 'orders-rs-post');
  await addIntrospector(s.h, s.realm, resource, rsCreds.client);
  const asPost = (clientId: string, secret: string) =>
    oidc.discovery(new URL(s.issuer), clientId, undefined, oidc.ClientSecretPost(secret), {
      execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
    });
  const web = await asPost('web-app', s.secret);
  const rs = await asPost('orders-rs-post', rsCreds.creds.secret);
  assert.equal(s.client.token_endpoint_auth_method, 'client_secret_basic');
  assert.equal(rsCreds.client.token_endpoint_auth_method, 'client_secret_basic');

  // Token endpoint: code redemption and refresh.
  const { tokens } = await codeFlow(s, web, { scope: 'openid orders:read', resource: ORDERS });
  assert.equal(tokens.claims()?.aud, 'web-app');
  const refreshed = await oidc.refreshTokenGrant(web, tokens.refresh_token ?? '', { resource: ORDERS });
  // An openid grant may add the UserInfo audience (decision D18); the resource is among them.
  assert.ok([decodeJwt(refreshed.access_token).aud].flat().includes(ORDERS));
  // Introspection by the resource server.
  const active = await oidc.tokenIntrospection(rs, refreshed.access_token);
  assert.deepEqual([active.active, active.client_id, active.sub], [true, 'web-app', s.user.id]);
  // Revocation by the client, seen by introspection.
  await oidc.tokenRevocation(web, refreshed.access_token);
  assert.deepEqual(await oidc.tokenIntrospection(rs, refreshed.access_token), { active: false });

  // The other method does not relax the secret: a wrong one is invalid_client, without a Basic challenge.
  const wrong = await asPost('web-app', 'pa_cs_wrong');
  await assert.rejects(
    oidc.refreshTokenGrant(wrong, refreshed.refresh_token ?? ''),
    oauthError('invalid_client', 401),
  );
  await assert.rejects(
    oidc.tokenRevocation(wrong, refreshed.access_token),
    oauthError('invalid_client', 401),
  );
  // Discovery still lists every method; the client record keeps its registered one.
  assert.ok(web.serverMetadata().token_endpoint_auth_methods_supported?.includes('client_secret_basic'));
});
