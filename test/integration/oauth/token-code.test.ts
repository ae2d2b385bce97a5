// grant_type=authorization_code at POST /realms/{realm}/oauth/token: PKCE, binding to client and
// redirect URI, single use with revocation on replay, ID token and refresh token issuance, and a
// realm without a signing key, which spends neither code nor refresh token (spec doc 1 Errors case
// rule 3).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { s256Challenge } from '../../../src/kernel/pkce.ts';
import { count, events, REDIRECT, rows, signinSetup } from '../../harness/signin-kit.ts';
import { clientSecret, codeFlow, oauthPost, signInForCode } from '../../harness/token-kit.ts';

async function setup(t: Parameters<typeof signinSetup>[0], client: Record<string, unknown> = {}) {
  const s = await signinSetup(t, { client });
  const secret = await clientSecret(s.h, s.realm, s.client);
  return { ...s, creds: { clientId: 'web-app', secret } };
}

const issuerOf = (h: { ctx: { config: { server: { publicOrigin: string } } } }, realm: { name: string }) =>
  `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`;

test('a code and its verifier buy an access token, an ID token and a refresh token, all verifiable with the JWKS', async (t) => {
  const { h, realm, user, creds } = await setup(t);
  const res = await codeFlow(h, realm, creds, { start: { scope: 'openid profile', nonce: 'n-1' } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.equal(res.body.token_type, 'Bearer');
  assert.equal(typeof res.body.expires_in, 'number');
  assert.match(res.body.refresh_token, /^pa_rt_/);
  const jwks = createRemoteJWKSet(new URL(`${h.publicUrl}/realms/${realm.name}/jwks`));
  const issuer = issuerOf(h, realm);
  const at = await jwtVerify(res.body.access_token, jwks, {
    issuer,
    audience: `${issuer}/oauth/userinfo`,
    typ: 'at+jwt',
  });
  assert.equal(at.payload.sub, user.id);
  assert.equal(at.payload.client_id, 'web-app');
  assert.equal(at.payload.scope, 'openid profile');
  assert.ok(at.payload.jti && at.payload.sid && at.payload.auth_time);
  const id = await jwtVerify(res.body.id_token, jwks, { issuer, audience: 'web-app' });
  assert.equal(id.payload.nonce, 'n-1');
  assert.equal(id.payload.sub, user.id);
  assert.equal(typeof id.payload.at_hash, 'string');
});

test('PKCE: a missing, malformed or wrong verifier is refused and the code stays unspent', async (t) => {
  const { h, realm, creds } = await setup(t);
  const { code, verifier } = await signInForCode(h, realm, 'web-app');
  const base = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT };
  const missing = await oauthPost(h, realm, 'token', base, creds);
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error, 'invalid_request');
  // RFC 7636 sections 4.1 and 4.6: outside 43..128 unreserved characters it cannot match.
  for (const bad of ['abc', 'a'.repeat(42), 'a'.repeat(129), `${verifier.slice(1)}+`]) {
    const malformed = await oauthPost(h, realm, 'token', { ...base, code_verifier: bad }, creds);
    assert.deepEqual([malformed.status, malformed.body.error], [400, 'invalid_grant'], bad);
  }
  const wrong = await oauthPost(
    h,
    realm,
    'token',
    { ...base, code_verifier: `${verifier.slice(1)}x` },
    creds,
  );
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.error, 'invalid_grant');
  // The challenge itself used as a verifier (the plain method) does not match either.
  const plain = await oauthPost(
    h,
    realm,
    'token',
    { ...base, code_verifier: s256Challenge(verifier) },
    creds,
  );
  assert.equal(plain.body.error, 'invalid_grant');
  const ok = await oauthPost(h, realm, 'token', { ...base, code_verifier: verifier }, creds);
  assert.equal(ok.status, 200);
});

test('a code is bound to its redirect URI and its client', async (t) => {
  const { h, realm, creds } = await setup(t);
  const other = await h.createClient(realm, {
    clientId: 'other-app',
    name: 'Other',
    type: 'web',
    redirectUris: [REDIRECT],
  });
  const otherCreds = { clientId: 'other-app', secret: await clientSecret(h, realm, other) };
  const { code, verifier } = await signInForCode(h, realm, 'web-app');
  const base = { grant_type: 'authorization_code', code, code_verifier: verifier };
  const wrongUri = await oauthPost(h, realm, 'token', { ...base, redirect_uri: `${REDIRECT}/x` }, creds);
  assert.equal(wrongUri.body.error, 'invalid_grant');
  const wrongClient = await oauthPost(h, realm, 'token', { ...base, redirect_uri: REDIRECT }, otherCreds);
  assert.equal(wrongClient.body.error, 'invalid_grant');
  const ok = await oauthPost(h, realm, 'token', { ...base, redirect_uri: REDIRECT }, creds);
  assert.equal(ok.status, 200);
});

test('a replayed code fails and revokes the refresh family and access token of its first redemption', async (t) => {
  const { h, realm, creds } = await setup(t);
  const { code, verifier } = await signInForCode(h, realm, 'web-app');
  const params = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
  const first = await oauthPost(h, realm, 'token', params, creds);
  assert.equal(first.status, 200);
  const replay = await oauthPost(h, realm, 'token', params, creds);
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, 'invalid_grant');
  const jti = decodeJwt(first.body.access_token).jti;
  assert.equal(
    await count(h, 'select 1 from token_revocations where realm_id = $1 and jti = $2', [realm.id, jti]),
    1,
  );
  const refreshed = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
    creds,
  );
  assert.equal(refreshed.body.error, 'invalid_grant');
  assert.equal(
    (
      await rows(h, `select * from audit_events where realm_id = $1 and type = 'token.code_replayed'`, [
        realm.id,
      ])
    ).length,
    1,
  );
});

test('an expired code is refused', async (t) => {
  const { movableClock } = await import('../../harness/signin-kit.ts');
  const clock = movableClock();
  const s = await signinSetup(t, { clock });
  const creds = { clientId: 'web-app', secret: await clientSecret(s.h, s.realm, s.client) };
  const { code, verifier } = await signInForCode(s.h, s.realm, 'web-app');
  clock.advance(61_000);
  const res = await oauthPost(
    s.h,
    s.realm,
    'token',
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
    creds,
  );
  assert.equal(res.body.error, 'invalid_grant');
});

test('wrong client credentials answer 401 invalid_client with a Basic challenge', async (t) => {
  const { h, realm } = await setup(t);
  const { code, verifier } = await signInForCode(h, realm, 'web-app');
  const res = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
    { clientId: 'web-app', secret: 'pa_cs_wrong' },
  );
  assert.equal(res.status, 401);
  assert.equal(res.body.error, 'invalid_client');
  assert.match(res.headers.get('www-authenticate') ?? '', /^Basic/);
});

test('unsupported and missing grant types, and a grant type the client may not use', async (t) => {
  const { h, realm, creds } = await setup(t);
  assert.equal(
    (await oauthPost(h, realm, 'token', { grant_type: 'password' }, creds)).body.error,
    'unsupported_grant_type',
  );
  assert.equal((await oauthPost(h, realm, 'token', {}, creds)).body.error, 'invalid_request');
  const cc = await oauthPost(h, realm, 'token', { grant_type: 'client_credentials' }, creds);
  assert.equal(cc.body.error, 'unauthorized_client');
});

test('a JSON body is not a token request', async (t) => {
  const { h, realm } = await setup(t);
  const res = await h.get(`/realms/${realm.name}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"grant_type":"client_credentials"}',
  });
  assert.equal(res.status, 415);
});

test('without a usable signing key the token endpoint answers 503 and spends neither the code nor the refresh token', async (t) => {
  const { h, realm, creds } = await setup(t);
  const first = await codeFlow(h, realm, creds);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const { code, verifier } = await signInForCode(h, realm, 'web-app');
  const redeem = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
  const refresh = { grant_type: 'refresh_token', refresh_token: first.body.refresh_token };
  const setKeyState = (from: string, to: string) =>
    h.ctx.db.query('update signing_keys set state = $3 where realm_id = $1 and state = $2', [
      realm.id,
      from,
      to,
    ]);

  // Spec doc 1, Errors case rule 3.
  await setKeyState('active', 'retired');
  for (const params of [redeem, refresh]) {
    const res = await oauthPost(h, realm, 'token', params, creds);
    assert.deepEqual([res.status, res.body.error], [503, 'temporarily_unavailable'], params.grant_type);
    assert.ok(res.headers.get('retry-after'));
  }
  const metrics = await (await h.internal('/metrics')).text();
  assert.match(metrics, /service_signing_failures_total\{reason="no_active_key"\} 2/);
  assert.match(metrics, /service_tokens_total\{grant_type="authorization_code",outcome="failure"\} 1/);
  assert.match(metrics, /service_tokens_total\{grant_type="refresh_token",outcome="failure"\} 1/);
  assert.equal(
    await count(h, 'select 1 from refresh_tokens where realm_id = $1 and rotated_at is not null', [realm.id]),
    0,
    'the refresh token was not rotated',
  );

  await setKeyState('retired', 'active');
  assert.equal((await oauthPost(h, realm, 'token', redeem, creds)).status, 200);
  const refreshed = await oauthPost(h, realm, 'token', refresh, creds);
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.match(refreshed.body.refresh_token, /^pa_rt_/);
  assert.notEqual(refreshed.body.refresh_token, first.body.refresh_token);
  assert.deepEqual(await events(h, realm, 'security.refresh_reuse_detected'), []);
});

test('an ordinary sign-in gets a session-bound refresh family; offline_access makes an offline one', async (t) => {
  const { h, realm, creds } = await setup(t);
  const online = await codeFlow(h, realm, creds);
  const fam = await rows(h, 'select offline, session_id from refresh_families where realm_id = $1', [
    realm.id,
  ]);
  assert.equal(fam.length, 1);
  assert.equal(fam[0]?.offline, false);
  assert.ok(online.body.refresh_token);
  const offline = await codeFlow(h, realm, creds, { start: { scope: 'openid offline_access' } });
  assert.ok(offline.body.refresh_token);
  assert.equal(
    await count(h, 'select 1 from refresh_families where realm_id = $1 and offline and session_id is null', [
      realm.id,
    ]),
    1,
  );
});
