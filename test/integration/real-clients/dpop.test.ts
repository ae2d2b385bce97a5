// DPoP (RFC 9449; spec doc 1, Authentication 8) as oauth4webapi and openid-client drive it: key-bound
// tokens from the code, refresh and client-credentials grants, proofs at UserInfo, /me and the
// administration API, cnf in introspection, server nonces, refresh tokens of a public client bound
// to its key, and single use of a proof across two processes on one database. Every refusal also
// checks that nothing was issued or spent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { accountAudience, adminAudience } from '../../../src/kernel/audiences.ts';
import { assignRoles, cliSignIn } from '../../harness/api-kit.ts';
import { dpopKey } from '../../harness/dpop-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { json } from '../../harness/signin-driver.ts';
import { oauthPost, seedGrant, seedResource, seedServiceClient } from '../../harness/token-kit.ts';
import { addIntrospector, ORDERS, REDIRECT, type RpSetup, rpSetup, signInAt, webSignIn } from './rp-kit.ts';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

async function discover(s: RpSetup) {
  const issuer = new URL(s.issuer);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
}

/** The authorization half of a code flow of the confidential web client, through oauth4webapi. */
async function webCodeFlow(s: RpSetup) {
  const as = await discover(s);
  const { client, callback, verifier } = await webSignIn(s, as, 'openid profile email');
  const auth = oauth.ClientSecretBasic(s.secret);
  return { as, client, auth, callback, verifier };
}

/** The code exchange of the web client by hand, with the given DPoP proof. */
const redeemByHand = (s: RpSetup, callback: URLSearchParams, verifier: string, proof: string) =>
  oauthPost(
    s.h,
    s.realm,
    'token',
    {
      grant_type: 'authorization_code',
      code: callback.get('code') ?? '',
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    },
    { clientId: 'web-app', secret: s.secret },
    { dpop: proof },
  );

const userinfoUrl = (s: RpSetup) => `${s.issuer}/oauth/userinfo`;

/** A raw UserInfo call with the given Authorization and DPoP headers. */
const userinfo = async (s: RpSetup, authorization: string, proof?: string) =>
  json(
    await fetch(userinfoUrl(s), {
      headers: { authorization, ...(proof === undefined ? {} : { dpop: proof }) },
    }),
  );

const opaqueCount = async (s: RpSetup) =>
  Number(
    (
      await s.h.ctx.db.query<{ n: string }>(
        'select count(*)::text as n from opaque_access_tokens where realm_id = $1',
        [s.realm.id],
      )
    ).rows[0]?.n,
  );

test('oauth4webapi: code flow and refresh give DPoP tokens bound to the key; UserInfo takes them only with a fresh proof', async (t) => {
  const s = await rpSetup(t);
  const key = await oauth.generateKeyPair('ES256');
  const dpop = oauth.DPoP({ client_id: 'web-app' } as oauth.Client, key);
  const { as, client, auth, callback, verifier } = await webCodeFlow(s);
  assert.deepEqual(as.dpop_signing_alg_values_supported, ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519']);

  // A bad proof at the code exchange is refused and spends nothing: the code still redeems.
  const badKey = await dpopKey('ES256');
  const tokenUrl = `${s.issuer}/oauth/token`;
  const refused = await redeemByHand(
    s,
    callback,
    verifier,
    await badKey.proof({ url: `${tokenUrl}-elsewhere` }),
  );
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error, 'invalid_dpop_proof');
  assert.equal(refused.body.access_token, undefined, 'nothing issued');

  const response = await oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT, verifier, {
    ...insecure,
    DPoP: dpop,
  });
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  assert.equal(tokens.token_type, 'dpop');
  const jkt = await calculateJwkThumbprint(await exportJWK(key.publicKey), 'sha256');
  assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt });

  // UserInfo through the library, with its proof.
  const info = await oauth.processUserInfoResponse(
    as,
    client,
    oauth.skipSubjectCheck,
    await oauth.userInfoRequest(as, client, tokens.access_token, { ...insecure, DPoP: dpop }),
  );
  assert.equal(info.sub, s.user.id);

  // The bound token as a plain bearer, and under the DPoP scheme without a proof: refused.
  const asBearer = await userinfo(s, `Bearer ${tokens.access_token}`);
  assert.equal(asBearer.status, 401);
  assert.match(asBearer.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/);
  const noProof = await userinfo(s, `DPoP ${tokens.access_token}`);
  assert.equal(noProof.status, 401);
  assert.match(noProof.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
  assert.equal(noProof.body.sub, undefined);

  // A valid proof of another key.
  const other = await badKey.proof({ method: 'GET', url: userinfoUrl(s), accessToken: tokens.access_token });
  const stranger = await userinfo(s, `DPoP ${tokens.access_token}`, other);
  assert.equal(stranger.status, 401);
  assert.match(stranger.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
  assert.equal(await dpop.calculateThumbprint(), jkt);

  // Refresh through the library keeps the binding.
  const refreshed = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token ?? '', {
      ...insecure,
      DPoP: dpop,
    }),
  );
  assert.equal(refreshed.token_type, 'dpop');
  assert.deepEqual(decodeJwt(refreshed.access_token).cnf, { jkt });
});

test('a proof is single use at UserInfo; the replay is refused with a DPoP challenge', async (t) => {
  const s = await rpSetup(t);
  const key = await dpopKey('ES256');
  const { callback, verifier } = await webCodeFlow(s);
  const res = await redeemByHand(s, callback, verifier, await key.proof({ url: `${s.issuer}/oauth/token` }));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.token_type, 'DPoP');
  const token = String(res.body.access_token);
  const proof = await key.proof({ method: 'GET', url: userinfoUrl(s), accessToken: token });
  const first = await userinfo(s, `DPoP ${token}`, proof);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const replay = await userinfo(s, `DPoP ${token}`, proof);
  assert.equal(replay.status, 401);
  assert.match(replay.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
  assert.equal(replay.body.sub, undefined);
  // A proof naming another method.
  const wrongPlace = await userinfo(
    s,
    `DPoP ${token}`,
    await key.proof({ method: 'POST', url: userinfoUrl(s), accessToken: token }),
  );
  assert.equal(wrongPlace.status, 401);
});

test('openid-client, public client: /me takes the bound token with its proof; refresh is bound to the key', async (t) => {
  const s = await rpSetup(t);
  const keyPair = await oidc.randomDPoPKeyPair('ES256');
  const config = await oidc.discovery(new URL(s.issuer), 'identity-cli', undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
  const dpop = oidc.getDPoPHandle(config, keyPair);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const account = accountAudience(s.h.ctx.config.server.publicOrigin, s.realm.name);
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: 'http://127.0.0.1:8123/callback',
    scope: 'openid',
    resource: account,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const callback = await signInAt(s.h, s.realm, url);
  const tokens = await oidc.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: verifier, expectedState: state },
    { resource: account },
    { DPoP: dpop },
  );
  assert.equal(tokens.token_type, 'dpop');
  const me = `${s.h.publicUrl}/api/v1/realms/${s.realm.name}/me/sessions`;
  const answer = await oidc.fetchProtectedResource(
    config,
    tokens.access_token,
    new URL(me),
    'GET',
    null,
    undefined,
    {
      DPoP: dpop,
    },
  );
  assert.equal(answer.status, 200);
  const listed = (await answer.json()) as { items: { current: boolean }[] };
  assert.ok(
    listed.items.some((x) => x.current),
    JSON.stringify(listed),
  );
  // Without the proof, or as a bearer: refused.
  const plain = await fetch(me, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  assert.equal(plain.status, 401);
  assert.match(plain.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/);
  const bare = await fetch(me, { headers: { authorization: `DPoP ${tokens.access_token}` } });
  assert.equal(bare.status, 401);
  assert.match(bare.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);

  // The refresh token of a public client answers only to a proof of the same key.
  const thief = await dpopKey('ES256');
  const stolen = await oauthPost(
    s.h,
    s.realm,
    'token',
    { grant_type: 'refresh_token', client_id: 'identity-cli', refresh_token: tokens.refresh_token ?? '' },
    undefined,
    { dpop: await thief.proof({ url: `${s.issuer}/oauth/token` }) },
  );
  assert.deepEqual([stolen.status, stolen.body.error], [400, 'invalid_grant']);
  assert.equal(stolen.body.access_token, undefined, 'nothing issued');
  const noProof = await oauthPost(s.h, s.realm, 'token', {
    grant_type: 'refresh_token',
    client_id: 'identity-cli',
    refresh_token: tokens.refresh_token ?? '',
  });
  assert.deepEqual([noProof.status, noProof.body.error], [400, 'invalid_grant']);
  // Nothing was spent: the holder of the key refreshes with the same token.
  const next = await oidc.refreshTokenGrant(
    config,
    tokens.refresh_token ?? '',
    { resource: account },
    { DPoP: dpop },
  );
  assert.equal(next.token_type, 'dpop');
  assert.ok(next.refresh_token);
});

test('client credentials with DPoP: bound JWT and opaque tokens, cnf in introspection, bearer use refused', async (t) => {
  const s = await rpSetup(t);
  const svc = await seedServiceClient(s.h, s.realm, 'billing');
  const orders = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  const opaque = await seedResource(s.h, s.realm, {
    audience: 'https://opaque.example.com',
    scopes: ['orders:read'],
    tokenFormat: 'opaque',
  });
  for (const r of [orders, opaque])
    await seedGrant(s.h, s.realm, svc.client, r, {
      scopes: ['orders:read'],
      subjectTypes: ['service_principal'],
    });
  const rs = await seedServiceClient(s.h, s.realm, 'orders-api');
  await addIntrospector(s.h, s.realm, orders, rs.client);
  await addIntrospector(s.h, s.realm, opaque, rs.client);

  const config = await oidc.discovery(
    new URL(s.issuer),
    'billing',
    undefined,
    oidc.ClientSecretBasic(svc.creds.secret),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
  const keyPair = await oidc.randomDPoPKeyPair('PS256');
  const dpop = oidc.getDPoPHandle(config, keyPair);
  const jkt = await dpop.calculateThumbprint();
  for (const audience of [ORDERS, 'https://opaque.example.com']) {
    const tokens = await oidc.clientCredentialsGrant(config, { resource: audience }, { DPoP: dpop });
    assert.equal(tokens.token_type, 'dpop');
    const seen = await oauthPost(s.h, s.realm, 'introspect', { token: tokens.access_token }, rs.creds);
    assert.equal(seen.body.active, true, audience);
    assert.equal(seen.body.token_type, 'DPoP');
    assert.deepEqual(seen.body.cnf, { jkt });
  }

  // A bad proof at the token endpoint: nothing issued, nothing stored.
  const before = await opaqueCount(s);
  const key = await dpopKey('ES256');
  for (const proof of [
    await key.proof({ url: `${s.issuer}/oauth/token`, method: 'GET' }),
    await key.proof({ url: `${s.issuer}/oauth/token`, typ: 'jwt' }),
    await key.proof({ url: `${s.issuer}/oauth/token`, iat: Math.floor(Date.now() / 1000) - 3600 }),
  ]) {
    const r = await oauthPost(
      s.h,
      s.realm,
      'token',
      { grant_type: 'client_credentials', resource: 'https://opaque.example.com' },
      svc.creds,
      { dpop: proof },
    );
    assert.deepEqual([r.status, r.body.error], [400, 'invalid_dpop_proof']);
    assert.equal(r.body.access_token, undefined);
  }
  assert.equal(await opaqueCount(s), before, 'nothing issued');

  // A proof replayed at the token endpoint.
  const once = await key.proof({ url: `${s.issuer}/oauth/token` });
  const ask = () =>
    oauthPost(s.h, s.realm, 'token', { grant_type: 'client_credentials', resource: ORDERS }, svc.creds, {
      dpop: once,
    });
  assert.equal((await ask()).status, 200);
  const again = await ask();
  assert.deepEqual([again.status, again.body.error], [400, 'invalid_dpop_proof']);
});

test('administration API: a DPoP-bound admin token needs its proof; bearer use and replays are refused', async (t) => {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const user = await h.createUser(realm, {
    email: 'admin@example.com',
    password: 'correct horse battery staple',
  });
  await assignRoles(h, realm, user.id, ['realm-admin']);
  const key = await dpopKey('ES256', { now: () => h.clock.now() });
  const admin = adminAudience(h.ctx.config.server.publicOrigin, realm.name);
  const tokens = await cliSignIn(
    h,
    realm,
    { id: user.id, email: 'admin@example.com', password: 'correct horse battery staple' },
    { resources: [admin], dpopProof: (url) => key.proof({ url }) },
  );
  const token = tokens.accessToken;
  assert.deepEqual(decodeJwt(token).cnf, { jkt: key.jkt });
  const path = `/api/v1/realms/${realm.name}/users`;
  const url = `${h.ctx.config.server.publicOrigin}${path}`;
  const call = (authorization: string, proof?: string) =>
    h.get(path, { headers: { authorization, ...(proof ? { dpop: proof } : {}) } });

  const proof = await key.proof({ method: 'GET', url, accessToken: token });
  assert.equal((await call(`DPoP ${token}`, proof)).status, 200);
  const replay = await call(`DPoP ${token}`, proof);
  assert.equal(replay.status, 401);
  assert.match(replay.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
  assert.equal((await call(`Bearer ${token}`)).status, 401);
  assert.equal((await call(`DPoP ${token}`)).status, 401);
  // A proof for another path, or hashing another token.
  assert.equal(
    (await call(`DPoP ${token}`, await key.proof({ method: 'GET', url: `${url}x`, accessToken: token })))
      .status,
    401,
  );
  assert.equal(
    (await call(`DPoP ${token}`, await key.proof({ method: 'GET', url, accessToken: 'other' }))).status,
    401,
  );
  // A fresh proof still works after the refusals.
  assert.equal(
    (await call(`DPoP ${token}`, await key.proof({ method: 'GET', url, accessToken: token }))).status,
    200,
  );
  // An unbound token under the DPoP scheme is refused, even with a proof.
  const unbound = (
    await cliSignIn(
      h,
      realm,
      { id: user.id, email: 'admin@example.com', password: 'correct horse battery staple' },
      { resources: [admin] },
    )
  ).accessToken;
  const asDpop = await call(`DPoP ${unbound}`, await key.proof({ method: 'GET', url, accessToken: unbound }));
  assert.equal(asDpop.status, 401);
  assert.match(asDpop.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_token"/);
  assert.equal((await call(`Bearer ${unbound}`)).status, 200);
  // The refresh (a public client) keeps the binding.
  const next = await tokens.refresh();
  assert.deepEqual(decodeJwt(next).cnf, { jkt: key.jkt });
  // Revoked (RFC 7009 takes a bound token without a proof): the live check refuses it, in DPoP terms.
  const revoked = await oauthPost(h, realm, 'revoke', { token: next, client_id: 'identity-cli' });
  assert.equal(revoked.status, 200);
  const afterRevoke = await call(`DPoP ${next}`, await key.proof({ method: 'GET', url, accessToken: next }));
  assert.equal(afterRevoke.status, 401);
  assert.match(afterRevoke.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_token"/);
});

test('a proof used at one process is refused at another process on the same database', async (t) => {
  const s = await rpSetup(t);
  const other = await startHarness(t, {
    db: s.h.ctx.db,
    clock: s.h.clock,
    overrides: { 'server.public_origin': s.h.publicUrl },
  });
  const svc = await seedServiceClient(s.h, s.realm, 'billing');
  const orders = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, svc.client, orders, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const key = await dpopKey('ES256');
  const proof = await key.proof({ url: `${s.issuer}/oauth/token` });
  const post = (base: string) =>
    fetch(`${base}/realms/${s.realm.name}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`billing:${svc.creds.secret}`).toString('base64')}`,
        dpop: proof,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: ORDERS }),
    }).then(json);
  const first = await post(s.h.publicUrl);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const second = await post(other.publicUrl);
  assert.deepEqual([second.status, second.body.error], [400, 'invalid_dpop_proof']);
  assert.equal(second.body.access_token, undefined, 'nothing issued');

  // And at a resource: UserInfo of the other process, with a proof first used here.
  const user = await cliSignIn(
    s.h,
    s.realm,
    { id: s.user.id, email: 'alice@example.com' },
    {
      resources: [],
      dpopProof: (url) => key.proof({ url }),
    },
  );
  const token = user.accessToken;
  const atUserinfo = await key.proof({ method: 'GET', url: userinfoUrl(s), accessToken: token });
  const here = await userinfo(s, `DPoP ${token}`, atUserinfo);
  assert.equal(here.status, 200, JSON.stringify(here.body));
  const there = await json(
    await fetch(`${other.publicUrl}/realms/${s.realm.name}/oauth/userinfo`, {
      headers: { authorization: `DPoP ${token}`, dpop: atUserinfo },
    }),
  );
  assert.equal(there.status, 401);
  assert.equal(there.body.sub, undefined);
});

test('server nonces: use_dpop_nonce with a DPoP-Nonce header, then the libraries retry with it', async (t) => {
  const s = await rpSetup(t, { overrides: { 'tokens.dpop_nonce_required': true } });
  const svc = await seedServiceClient(s.h, s.realm, 'billing');
  const orders = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, svc.client, orders, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const as = await discover(s);
  const client: oauth.Client = { client_id: 'billing' };
  const auth = oauth.ClientSecretBasic(svc.creds.secret);
  const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
  const request = () =>
    oauth
      .clientCredentialsGrantRequest(as, client, auth, new URLSearchParams({ resource: ORDERS }), {
        ...insecure,
        DPoP: dpop,
      })
      .then((r) => oauth.processClientCredentialsResponse(as, client, r));
  await assert.rejects(request(), (e: unknown) => {
    assert.ok(oauth.isDPoPNonceError(e), String(e));
    return true;
  });
  // The handle kept the nonce of the refusal; the retry carries it.
  const tokens = await request();
  assert.equal(tokens.token_type, 'dpop');

  // By hand: the refusal names a nonce, a proof with it passes, a forged or stale one does not.
  const key = await dpopKey('ES256', { now: () => s.h.clock.now() });
  const byHand = async (nonce?: string) =>
    oauthPost(s.h, s.realm, 'token', { grant_type: 'client_credentials', resource: ORDERS }, svc.creds, {
      dpop: await key.proof({ url: `${s.issuer}/oauth/token`, ...(nonce === undefined ? {} : { nonce }) }),
    });
  const bare = await byHand();
  assert.deepEqual([bare.status, bare.body.error], [400, 'use_dpop_nonce']);
  const nonce = bare.headers.get('dpop-nonce') ?? '';
  assert.ok(nonce.length > 0);
  const withNonce = await byHand(nonce);
  assert.equal(withNonce.status, 200, JSON.stringify(withNonce.body));
  const forged = await byHand(`${nonce.slice(0, -1)}${nonce.endsWith('A') ? 'B' : 'A'}`);
  assert.deepEqual([forged.status, forged.body.error], [400, 'use_dpop_nonce']);
  s.h.clock.advance(121_000);
  const stale = await byHand(nonce);
  assert.deepEqual([stale.status, stale.body.error], [400, 'use_dpop_nonce']);
  assert.notEqual(stale.headers.get('dpop-nonce'), nonce, 'a fresh nonce comes with the refusal');
});
