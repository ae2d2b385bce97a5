// A FAPI 2.0 security profile client as oauth4webapi drives it: pushed authorization requests only
// (RFC 9126), PKCE S256, and sender-constrained tokens, once with private_key_jwt and DPoP (RFC
// 9449), once with tls_client_auth and certificate-bound tokens (RFC 8705) on the mutual-TLS
// listener. The user signs in through the headless transaction, the client calls UserInfo, and the
// resource server's introspection shows the token's cnf. Each refusal leaves nothing issued.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose';
import * as oauth from 'oauth4webapi';
import type { ClientRow } from '../../../src/clients/clients.repo.ts';
import { issuerOf } from '../../../src/kernel/audiences.ts';
import { dpopKey } from '../../harness/dpop-kit.ts';
import { certThumbprint, issuedCertificate, testCa } from '../../harness/mtls-certs.ts';
import { mtlsFetch, selfSignedCertificate, startMtlsListener } from '../../harness/mtls-kit.ts';
import { authorize, count, issuedSoFar } from '../../harness/signin-kit.ts';
import {
  oauthPost,
  seedGrant,
  seedResource,
  seedServiceClient,
  tokensIssued,
} from '../../harness/token-kit.ts';
import { addIntrospector, ORDERS, REDIRECT, type RpSetup, rpSetup, signInAt } from './rp-kit.ts';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** ORDERS with an introspecting resource server, and the client granted it. */
async function ordersApi(s: RpSetup, client: ClientRow) {
  const resource = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, client, resource, { scopes: ['orders:read'] });
  const rs = await seedServiceClient(s.h, s.realm, 'orders-api');
  await addIntrospector(s.h, s.realm, resource, rs.client);
  return (token: string) => oauthPost(s.h, s.realm, 'introspect', { token }, rs.creds);
}

/** The pushed authorization request, the sign-in and the callback, through oauth4webapi. */
async function pushedSignIn(
  s: RpSetup,
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  auth: oauth.ClientAuth,
  options: oauth.PushedAuthorizationRequestOptions,
) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const params = new URLSearchParams({
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid orders:read',
    resource: ORDERS,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const pushed = await oauth.processPushedAuthorizationResponse(
    as,
    client,
    await oauth.pushedAuthorizationRequest(as, client, auth, params, { ...insecure, ...options }),
  );
  const url = new URL(as.authorization_endpoint ?? '');
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('request_uri', pushed.request_uri);
  const callback = oauth.validateAuthResponse(as, client, await signInAt(s.h, s.realm, url), state);
  return { callback, verifier, nonce, params };
}

/** A plain (not pushed) authorization request of the client is refused before any sign-in. */
async function plainRequestRefused(s: RpSetup, clientId: string, params: URLSearchParams) {
  const before = await issuedSoFar(s.h, s.realm);
  const plain = new URLSearchParams(params);
  plain.set('client_id', clientId);
  const r = await authorize(s.h, s.realm.name, plain);
  assert.equal(r.status, 400);
  assert.equal(r.headers.get('location'), null);
  assert.deepEqual(await issuedSoFar(s.h, s.realm), before);
}

test('FAPI 2.0 with private_key_jwt, PAR, PKCE and DPoP: sign-in, UserInfo and introspection', async (t) => {
  const s = await rpSetup(t);
  const signing = await oauth.generateKeyPair('ES256');
  const client = await s.h.createClient(s.realm, {
    clientId: 'fapi-dpop',
    name: 'FAPI DPoP',
    type: 'web',
    redirectUris: [REDIRECT],
    tokenEndpointAuthMethod: 'private_key_jwt',
    requirePushedRequests: true,
    jwks: { keys: [{ ...(await exportJWK(signing.publicKey)), kid: 'k1', use: 'sig', alg: 'ES256' }] },
  });
  const introspect = await ordersApi(s, client);
  const issuer = new URL(s.issuer);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  const c: oauth.Client = { client_id: 'fapi-dpop' };
  const auth = oauth.PrivateKeyJwt({ key: signing.privateKey, kid: 'k1' });
  const key = await oauth.generateKeyPair('ES256');
  const dpop = oauth.DPoP(c, key);
  const jkt = await calculateJwkThumbprint(await exportJWK(key.publicKey), 'sha256');

  const flow = await pushedSignIn(s, as, c, auth, {});
  await plainRequestRefused(s, 'fapi-dpop', flow.params);

  // The code redeemed with a proof made for another URL is refused and spends nothing: the same
  // code redeems afterwards.
  const before = await tokensIssued(s.h);
  const wrongProof = await (await dpopKey()).proof({ url: `${s.issuer}/oauth/elsewhere` });
  const refused = await oauth.authorizationCodeGrantRequest(
    as,
    c,
    auth,
    flow.callback,
    REDIRECT,
    flow.verifier,
    {
      ...insecure,
      [oauth.customFetch]: (url: string, init: RequestInit) => {
        const headers = new Headers(init.headers);
        headers.set('dpop', wrongProof);
        return fetch(url, { ...init, headers });
      },
    },
  );
  assert.equal(refused.status, 400);
  assert.equal(((await refused.json()) as { error: string }).error, 'invalid_dpop_proof');
  assert.equal(await tokensIssued(s.h), before);

  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    c,
    await oauth.authorizationCodeGrantRequest(as, c, auth, flow.callback, REDIRECT, flow.verifier, {
      ...insecure,
      DPoP: dpop,
    }),
    { expectedNonce: flow.nonce },
  );
  assert.equal(tokens.token_type, 'dpop');
  assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt });

  const info = await oauth.processUserInfoResponse(
    as,
    c,
    s.user.id,
    await oauth.userInfoRequest(as, c, tokens.access_token, { ...insecure, DPoP: dpop }),
  );
  assert.equal(info.sub, s.user.id);
  const introspected = await introspect(tokens.access_token);
  assert.equal(introspected.body.active, true);
  assert.equal(introspected.body.token_type, 'DPoP');
  assert.deepEqual(introspected.body.cnf, { jkt });

  // Without its proof the token buys nothing at UserInfo.
  const bare = await fetch(as.userinfo_endpoint ?? '', {
    headers: { authorization: `Bearer ${tokens.access_token}` },
  });
  assert.equal(bare.status, 401);
});

test('FAPI 2.0 with tls_client_auth, PAR, PKCE and certificate-bound tokens: sign-in, UserInfo and introspection', async (t: TestContext) => {
  const s = await rpSetup(t);
  const [server, ca] = await Promise.all([
    selfSignedCertificate('localhost', '127.0.0.1'),
    testCa('C=DE, O=Acme, CN=Acme Issuing CA'),
  ]);
  const { url: mtlsUrl } = await startMtlsListener(t, s.h, server);
  s.h.ctx.config.server.mtlsOrigin = mtlsUrl;
  const [cert, stranger] = await Promise.all([
    issuedCertificate(ca, 'C=DE, O=Acme, CN=fapi-mtls'),
    issuedCertificate(ca, 'C=DE, O=Acme, CN=someone-else'),
  ]);
  const client = await s.h.createClient(s.realm, {
    clientId: 'fapi-mtls',
    name: 'FAPI mTLS',
    type: 'web',
    redirectUris: [REDIRECT],
    tokenEndpointAuthMethod: 'tls_client_auth',
    requirePushedRequests: true,
    tlsClientAuth: {
      subject: { member: 'tls_client_auth_subject_dn', value: 'CN=fapi-mtls,O=Acme,C=DE' },
      trust_anchors: [ca.certPem],
    },
  });
  const introspect = await ordersApi(s, client);
  const issuer = new URL(s.issuer);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  assert.equal(
    as.mtls_endpoint_aliases?.pushed_authorization_request_endpoint,
    `${issuerOf(mtlsUrl, s.realm.name)}/oauth/par`,
  );
  const c: oauth.Client = { client_id: 'fapi-mtls', use_mtls_endpoint_aliases: true };
  const auth = oauth.TlsClientAuth();
  const withCert = { [oauth.customFetch]: mtlsFetch(t, server, cert) };

  // Another certificate of the same CA does not push a request for this client.
  const pushedBefore = await count(s.h, 'select 1 from pushed_authorization_requests where realm_id = $1', [
    s.realm.id,
  ]);
  await assert.rejects(
    pushedSignIn(s, as, c, auth, { [oauth.customFetch]: mtlsFetch(t, server, stranger) }),
    (e: unknown) => e instanceof oauth.ResponseBodyError && e.error === 'invalid_client',
  );
  assert.equal(
    await count(s.h, 'select 1 from pushed_authorization_requests where realm_id = $1', [s.realm.id]),
    pushedBefore,
  );

  const flow = await pushedSignIn(s, as, c, auth, withCert);
  await plainRequestRefused(s, 'fapi-mtls', flow.params);
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    c,
    await oauth.authorizationCodeGrantRequest(as, c, auth, flow.callback, REDIRECT, flow.verifier, {
      ...insecure,
      ...withCert,
    }),
    { expectedNonce: flow.nonce },
  );
  const thumbprint = certThumbprint(cert);
  assert.equal(tokens.token_type, 'bearer');
  assert.deepEqual(decodeJwt(tokens.access_token).cnf, { 'x5t#S256': thumbprint });

  const info = await oauth.processUserInfoResponse(
    as,
    c,
    s.user.id,
    await oauth.userInfoRequest(as, c, tokens.access_token, { ...insecure, ...withCert }),
  );
  assert.equal(info.sub, s.user.id);
  const introspected = await introspect(tokens.access_token);
  assert.equal(introspected.body.active, true);
  assert.deepEqual(introspected.body.cnf, { 'x5t#S256': thumbprint });

  // The same token without the certificate, or with another, is refused at UserInfo.
  const bearer = { authorization: `Bearer ${tokens.access_token}` };
  assert.equal((await fetch(as.userinfo_endpoint ?? '', { headers: bearer })).status, 401);
  const aliased = as.mtls_endpoint_aliases?.userinfo_endpoint ?? '';
  assert.equal((await mtlsFetch(t, server, stranger)(aliased, { headers: bearer })).status, 401);
});
