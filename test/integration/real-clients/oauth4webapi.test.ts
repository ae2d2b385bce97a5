// The realm as a relying party and a resource server built on oauth4webapi 3 see it: discovery at
// both metadata locations, the code flow (validateAuthResponse, PKCE, nonce, the ID token
// signature through validateApplicationLevelSignature), refresh rotation, client credentials,
// token exchange through the generic token endpoint request, introspection and revocation,
// UserInfo, JARM in both JWT response modes, and RFC 9068 access token validation. Only the login
// page is replaced by the headless sign-in (rp-kit.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportJWK, generateKeyPair, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { seedGrant, seedResource, seedServiceClient } from '../../harness/token-kit.ts';
import {
  ACCESS_TOKEN_TYPE,
  addIntrospector,
  expectedAtHash,
  INVENTORY,
  ORDERS,
  REDIRECT,
  type RpSetup,
  rpSetup,
  signInAt,
  TOKEN_EXCHANGE,
} from './rp-kit.ts';

// Every request goes to the harness over http, which the library refuses unless told.
const insecure = { [oauth.allowInsecureRequests]: true } as const;

async function discover(s: RpSetup, algorithm: 'oidc' | 'oauth2' = 'oidc') {
  const issuer = new URL(s.issuer);
  return oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm, ...insecure }),
  );
}

interface Party {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
}

async function party(s: RpSetup, clientId = 'web-app', secret = s.secret): Promise<Party> {
  return { as: await discover(s), client: { client_id: clientId }, auth: oauth.ClientSecretBasic(secret) };
}

interface Attempt {
  callback: URL;
  verifier: string;
  state: string;
  nonce: string;
}

/** The authorization URL as the library's documentation builds it, then the sign-in. */
async function authorize(s: RpSetup, p: Party, params: Record<string, string> = {}): Promise<Attempt> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(p.as.authorization_endpoint ?? '');
  const all = {
    client_id: p.client.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid profile email',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...params,
  };
  for (const [k, v] of Object.entries(all)) url.searchParams.set(k, v);
  return { callback: await signInAt(s.h, s.realm, url), verifier, state, nonce };
}

/** The token request and its checks; the ID token's signature is checked against the JWKS too. */
async function redeem(p: Party, callbackParams: URLSearchParams, a: Attempt, expectedNonce = a.nonce) {
  const response = await oauth.authorizationCodeGrantRequest(
    p.as,
    p.client,
    p.auth,
    callbackParams,
    REDIRECT,
    a.verifier,
    insecure,
  );
  const tokens = await oauth.processAuthorizationCodeResponse(p.as, p.client, response, {
    expectedNonce,
    requireIdToken: true,
  });
  await oauth.validateApplicationLevelSignature(p.as, response, insecure);
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  assert.ok(claims);
  return { tokens, claims };
}

async function codeFlow(s: RpSetup, p: Party, params: Record<string, string> = {}) {
  const attempt = await authorize(s, p, params);
  const callbackParams = oauth.validateAuthResponse(p.as, p.client, attempt.callback, attempt.state);
  return { attempt, ...(await redeem(p, callbackParams, attempt)) };
}

/** The resource server's view of a bearer token (RFC 9068). */
const asResourceServer = (
  as: oauth.AuthorizationServer,
  token: string,
  audience: string,
  signingAlgorithms?: string[],
) =>
  oauth.validateJwtAccessToken(
    as,
    new Request('https://orders.example.com/orders', { headers: { authorization: `Bearer ${token}` } }),
    audience,
    { ...insecure, ...(signingAlgorithms ? { signingAlgorithms } : {}) },
  );

const oauthError =
  (error: string, status = 400) =>
  (e: unknown) => {
    assert.ok(e instanceof oauth.ResponseBodyError, `expected a ResponseBodyError, got ${String(e)}`);
    assert.equal(e.error, error);
    assert.equal(e.status, status);
    return true;
  };

const processingError = (code: string, reason?: RegExp) => (e: unknown) => {
  assert.ok(
    e instanceof oauth.OperationProcessingError,
    `expected an OperationProcessingError, got ${String(e)}`,
  );
  assert.equal(e.code, code);
  if (reason) assert.match(e.message, reason);
  return true;
};

test('discovery: both metadata locations validate against the issuer', async (t) => {
  const s = await rpSetup(t);
  for (const algorithm of ['oidc', 'oauth2'] as const) {
    const as = await discover(s, algorithm);
    assert.equal(as.issuer, s.issuer, algorithm);
    assert.equal(as.introspection_endpoint, `${s.issuer}/oauth/introspect`);
    assert.equal(as.revocation_endpoint, `${s.issuer}/oauth/revoke`);
    assert.equal(as.userinfo_endpoint, `${s.issuer}/oauth/userinfo`);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
  }
  // processDiscoveryResponse compares the document's issuer with the one asked for.
  const elsewhere = new URL(`${s.issuer}-other`);
  const res = await fetch(`${s.issuer}/.well-known/openid-configuration`);
  await assert.rejects(
    oauth.processDiscoveryResponse(elsewhere, res),
    processingError(oauth.JSON_ATTRIBUTE_COMPARISON),
  );
});

test('code flow: validateAuthResponse, the PKCE token request, nonce and signature checks', async (t) => {
  const s = await rpSetup(t);
  const p = await party(s);
  const { attempt, tokens, claims } = await codeFlow(s, p);
  assert.equal(attempt.callback.searchParams.get('iss'), s.issuer);
  assert.equal(tokens.token_type, 'bearer');
  assert.equal(claims.iss, s.issuer);
  assert.equal(claims.aud, 'web-app');
  assert.equal(claims.sub, s.user.id);
  assert.equal(claims.nonce, attempt.nonce);
  assert.equal(claims.at_hash, expectedAtHash(tokens.id_token ?? '', tokens.access_token));
  const at = await asResourceServer(p.as, tokens.access_token, `${s.issuer}/oauth/userinfo`);
  assert.equal(at.sub, s.user.id);
  assert.equal(at.client_id, 'web-app');
  assert.equal(at.scope, 'openid profile email');
  await jwtVerify(tokens.access_token, s.jwks, { issuer: s.issuer, typ: 'at+jwt' });
});

test('refresh: rotation through the library, reuse of the old token is invalid_grant', async (t) => {
  const s = await rpSetup(t);
  const p = await party(s);
  const { tokens } = await codeFlow(s, p);
  const first = tokens.refresh_token ?? '';
  const refresh = (token: string) =>
    oauth
      .refreshTokenGrantRequest(p.as, p.client, p.auth, token, insecure)
      .then((res) => oauth.processRefreshTokenResponse(p.as, p.client, res));
  const next = await refresh(first);
  assert.ok(next.refresh_token);
  assert.notEqual(next.refresh_token, first);
  assert.equal(oauth.getValidatedIdTokenClaims(next)?.sub, s.user.id);
  await assert.rejects(refresh(first), oauthError('invalid_grant'));
  await assert.rejects(refresh(next.refresh_token), oauthError('invalid_grant'), 'reuse ends the family');
});

test('client_credentials: an RS256 token for the named resource, valid by RFC 9068', async (t) => {
  const s = await rpSetup(t);
  const svc = await seedServiceClient(s.h, s.realm, 'billing');
  const res = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, svc.client, res, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const p = await party(s, 'billing', svc.creds.secret);
  const response = await oauth.clientCredentialsGrantRequest(
    p.as,
    p.client,
    p.auth,
    { resource: ORDERS },
    insecure,
  );
  const tokens = await oauth.processClientCredentialsResponse(p.as, p.client, response);
  const claims = await asResourceServer(p.as, tokens.access_token, ORDERS, ['RS256']);
  assert.equal(claims.sub, svc.principalId);
  assert.equal(claims.scope, 'orders:read');
  const elsewhere = await oauth.clientCredentialsGrantRequest(
    p.as,
    p.client,
    p.auth,
    { resource: 'https://nope.example.com' },
    insecure,
  );
  await assert.rejects(
    oauth.processClientCredentialsResponse(p.as, p.client, elsewhere),
    oauthError('invalid_target'),
  );
});

test('an ES256 realm: JARM (query.jwt), the ID token and a client_credentials token, all ES256', async (t) => {
  const s = await rpSetup(t, { overrides: { 'keys.signing_algorithm': 'ES256' } });
  const p = await party(s);
  assert.deepEqual(p.as.authorization_signing_alg_values_supported, ['ES256']);
  const attempt = await authorize(s, p, { response_mode: 'query.jwt' });
  const params = await oauth.validateJwtAuthResponse(
    p.as,
    p.client,
    attempt.callback,
    attempt.state,
    insecure,
  );
  const { tokens } = await redeem(p, params, attempt);
  const id = await jwtVerify(tokens.id_token ?? '', s.jwks, { algorithms: ['ES256'] });
  assert.equal(id.payload.sub, s.user.id);
  const svc = await seedServiceClient(s.h, s.realm, 'billing');
  const res = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, svc.client, res, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const billing = await party(s, 'billing', svc.creds.secret);
  const cc = await oauth.processClientCredentialsResponse(
    billing.as,
    billing.client,
    await oauth.clientCredentialsGrantRequest(
      billing.as,
      billing.client,
      billing.auth,
      { resource: ORDERS },
      insecure,
    ),
  );
  assert.equal((await asResourceServer(p.as, cc.access_token, ORDERS, ['ES256'])).sub, svc.principalId);
});

test('token exchange through the generic token endpoint request', async (t) => {
  const s = await rpSetup(t);
  const orders = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  const inventory = await seedResource(s.h, s.realm, { audience: INVENTORY, scopes: ['stock:read'] });
  await seedGrant(s.h, s.realm, s.client, orders, { scopes: ['orders:read'] });
  const svc = await seedServiceClient(s.h, s.realm, 'orders-api', [TOKEN_EXCHANGE]);
  await seedGrant(s.h, s.realm, svc.client, inventory, {
    scopes: ['stock:read'],
    exchange: { acceptFrom: [ORDERS], maxScopes: ['stock:read'] },
  });
  const { tokens } = await codeFlow(s, await party(s), { scope: 'openid orders:read', resource: ORDERS });
  const api = await party(s, 'orders-api', svc.creds.secret);
  const exchange = (subjectToken: string) =>
    oauth
      .genericTokenEndpointRequest(
        api.as,
        api.client,
        api.auth,
        TOKEN_EXCHANGE,
        { subject_token: subjectToken, subject_token_type: ACCESS_TOKEN_TYPE, resource: INVENTORY },
        insecure,
      )
      .then((res) => oauth.processGenericTokenEndpointResponse(api.as, api.client, res));
  const exchanged = await exchange(tokens.access_token);
  assert.equal(exchanged.issued_token_type, ACCESS_TOKEN_TYPE);
  const claims = await asResourceServer(api.as, exchanged.access_token, INVENTORY);
  assert.equal(claims.sub, s.user.id);
  assert.deepEqual(claims.act, { sub: svc.principalId });
  assert.equal(claims.client_id, 'orders-api');
  await assert.rejects(exchange(exchanged.access_token), oauthError('invalid_grant'));
});

test('introspection and revocation through the library: active with its claims, then inactive', async (t) => {
  const s = await rpSetup(t);
  const resource = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, s.client, resource, { scopes: ['orders:read'] });
  const rsSvc = await seedServiceClient(s.h, s.realm, 'orders-rs');
  await addIntrospector(s.h, s.realm, resource, rsSvc.client);
  const web = await party(s);
  const rs = await party(s, 'orders-rs', rsSvc.creds.secret);
  const { tokens } = await codeFlow(s, web, { scope: 'openid orders:read', resource: ORDERS });
  const introspect = async (token: string) =>
    oauth.processIntrospectionResponse(
      rs.as,
      rs.client,
      await oauth.introspectionRequest(rs.as, rs.client, rs.auth, token, insecure),
    );
  const active = await introspect(tokens.access_token);
  assert.equal(active.active, true);
  assert.equal(active.sub, s.user.id);
  // The grant has openid: the resource's audience first, then UserInfo's (docs/tokens.md).
  assert.deepEqual(active.aud, [ORDERS, `${s.issuer}/oauth/userinfo`]);
  assert.equal(active.scope, 'openid orders:read');
  assert.equal(active.client_id, 'web-app');
  // Refresh tokens are never shown to resource servers.
  assert.equal((await introspect(tokens.refresh_token ?? '')).active, false);
  // Only an introspector registered for the resource learns anything.
  const stranger = await seedServiceClient(s.h, s.realm, 'stranger');
  const other = await party(s, 'stranger', stranger.creds.secret);
  const strangerView = await oauth.processIntrospectionResponse(
    other.as,
    other.client,
    await oauth.introspectionRequest(other.as, other.client, other.auth, tokens.access_token, insecure),
  );
  assert.equal(strangerView.active, false);
  await oauth.processRevocationResponse(
    await oauth.revocationRequest(web.as, web.client, web.auth, tokens.access_token, insecure),
  );
  assert.equal((await introspect(tokens.access_token)).active, false);
});

test('UserInfo through userInfoRequest and processUserInfoResponse with the expected subject', async (t) => {
  const s = await rpSetup(t);
  const p = await party(s);
  const { tokens, claims } = await codeFlow(s, p);
  const userinfo = async (expected: string) =>
    oauth.processUserInfoResponse(
      p.as,
      p.client,
      expected,
      await oauth.userInfoRequest(p.as, p.client, tokens.access_token, insecure),
    );
  const info = await userinfo(claims.sub);
  assert.equal(info.sub, s.user.id);
  assert.equal(info.email, 'alice@example.com');
  assert.equal(info.name, 'Alice Example');
  await assert.rejects(userinfo('someone-else'), processingError(oauth.JSON_ATTRIBUTE_COMPARISON));
});

test('JARM: validateJwtAuthResponse accepts the signed response (response_mode=jwt) and rejects a wrong state', async (t) => {
  const s = await rpSetup(t);
  const p = await party(s);
  const attempt = await authorize(s, p, { response_mode: 'jwt' });
  assert.deepEqual([...attempt.callback.searchParams.keys()], ['response']);
  await assert.rejects(
    oauth.validateJwtAuthResponse(p.as, p.client, attempt.callback, oauth.generateRandomState(), insecure),
    processingError(oauth.INVALID_RESPONSE, /"state"/),
  );
  // The plain validator does not take a JWT response in place of code, state and iss.
  assert.throws(
    () => oauth.validateAuthResponse(p.as, p.client, attempt.callback, attempt.state),
    processingError(oauth.INVALID_RESPONSE, /JARM/),
  );
  const params = await oauth.validateJwtAuthResponse(
    p.as,
    p.client,
    attempt.callback,
    attempt.state,
    insecure,
  );
  assert.equal(params.get('iss'), s.issuer);
  const { claims } = await redeem(p, params, attempt);
  assert.equal(claims.sub, s.user.id);
});

test('ID token checks the library makes: a wrong expected nonce is refused', async (t) => {
  const s = await rpSetup(t);
  const p = await party(s);
  const attempt = await authorize(s, p);
  const params = oauth.validateAuthResponse(p.as, p.client, attempt.callback, attempt.state);
  await assert.rejects(
    redeem(p, params, attempt, oauth.generateRandomNonce()),
    processingError(oauth.JWT_CLAIM_COMPARISON),
  );
  // A callback from another issuer (RFC 9207) is refused before any token request.
  const mixedUp = new URL(attempt.callback);
  mixedUp.searchParams.set('iss', 'https://attacker.example.com');
  assert.throws(
    () => oauth.validateAuthResponse(p.as, p.client, mixedUp, attempt.state),
    processingError(oauth.INVALID_RESPONSE, /unexpected "iss"/),
  );
});

test('private_key_jwt through the library: its client assertion authenticates a client_credentials request', async (t) => {
  const s = await rpSetup(t);
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const client = await s.h.createClient(s.realm, {
    clientId: 'signer',
    name: 'Signer',
    type: 'service',
    redirectUris: [],
    grantTypes: ['client_credentials'],
    tokenEndpointAuthMethod: 'private_key_jwt',
    jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', use: 'sig', alg: 'ES256' }] },
  });
  await s.h.ctx.db.query(
    `insert into service_principals (realm_id, id, client_row_id, state, created_at, updated_at)
     values ($1, 'spr_signer', $2, 'active', now(), now())`,
    [s.realm.id, client.id],
  );
  const res = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, client, res, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const as = await discover(s);
  assert.ok(as.token_endpoint_auth_methods_supported?.includes('private_key_jwt'));
  assert.ok(as.token_endpoint_auth_signing_alg_values_supported?.includes('ES256'));
  const signer = { client_id: 'signer' };
  const request = () =>
    oauth.clientCredentialsGrantRequest(
      as,
      signer,
      oauth.PrivateKeyJwt({ key: privateKey, kid: 'k1' }),
      { resource: ORDERS },
      insecure,
    );
  const tokens = await oauth.processClientCredentialsResponse(as, signer, await request());
  assert.equal((await asResourceServer(as, tokens.access_token, ORDERS)).sub, 'spr_signer');
  // Each assertion is fresh (new jti), so a second request authenticates too.
  await oauth.processClientCredentialsResponse(as, signer, await request());
});

test('client_secret_basic with a client_id the library must form-encode (RFC 6749 section 2.3.1)', async (t) => {
  const s = await rpSetup(t);
  const clientId = "svc:ops+1~(x)'*!";
  const svc = await seedServiceClient(s.h, s.realm, clientId);
  const res = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, svc.client, res, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const p = await party(s, clientId, svc.creds.secret);
  const response = await oauth.clientCredentialsGrantRequest(
    p.as,
    p.client,
    p.auth,
    { resource: ORDERS },
    insecure,
  );
  const tokens = await oauth.processClientCredentialsResponse(p.as, p.client, response);
  const claims = await asResourceServer(p.as, tokens.access_token, ORDERS);
  assert.equal(claims.client_id, clientId);
  assert.equal(claims.sub, svc.principalId);
});
