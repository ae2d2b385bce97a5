// GET and POST /realms/{realm}/oauth/userinfo (OIDC Core 5.3): claims by scope for a live
// userinfo-audience bearer from the Authorization header; RFC 6750 errors otherwise.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { signAccessToken } from '../../../src/access/access-token.ts';
import { issuerOf, userinfoAudience } from '../../../src/kernel/audiences.ts';
import { revokeSession } from '../../../src/sessions/grants.repo.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import type { Harness } from '../../harness/harness.ts';
import { json } from '../../harness/signin-driver.ts';
import { signinSetup } from '../../harness/signin-kit.ts';
import {
  clientSecret,
  codeFlow,
  oauthPost,
  registerIntrospector,
  seedGrant,
  seedResource,
} from '../../harness/token-kit.ts';

async function setup(t: Parameters<typeof signinSetup>[0], scope = 'openid profile email phone') {
  const s = await signinSetup(t, {
    user: { username: 'alice', displayName: 'Alice Liddell', phone: '+14155550100' },
  });
  const { h, realm, client } = s;
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const tokens = await codeFlow(h, realm, creds, { start: { scope } });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const path = `/realms/${realm.name}/oauth/userinfo`;
  const userinfo = async (
    init: RequestInit = {},
    token: string | null = tokens.body.access_token,
    query = '',
  ) =>
    json(
      await h.get(`${path}${query}`, {
        ...init,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers ?? {}) },
      }),
    );
  return { ...s, creds, tokens, userinfo, path };
}

/** A userinfo-audience token signed like the token endpoint's, with chosen scopes or cnf. */
async function signedLike(
  h: Harness,
  realm: { id: string; name: string },
  from: string,
  extra: { scopes: string[]; cnf?: { jkt: string } },
) {
  const c = decodeJwt(from);
  const signer = await h.ctx.keyStore.activeSigner(realm.id);
  if (!signer) throw new Error('no signer');
  const origin = h.ctx.config.server.publicOrigin;
  const signed = await signAccessToken(
    {
      issuer: issuerOf(origin, realm.name),
      subject: c.sub as string,
      audience: userinfoAudience(origin, realm.name),
      clientId: c.client_id as string,
      scopes: extra.scopes,
      lifetimeSeconds: 300,
      authTime: new Date((c.auth_time as number) * 1000),
      sessionId: c.sid as string,
      cnf: extra.cnf ?? null,
    },
    signer,
    h.ctx.clock.now(),
  );
  return signed.token;
}

test('GET and POST release the claims of the granted scopes', async (t) => {
  const { user, userinfo } = await setup(t);
  const got = await userinfo();
  assert.equal(got.status, 200, JSON.stringify(got.body));
  assert.equal(got.headers.get('cache-control'), 'no-store');
  assert.match(got.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(got.body, {
    sub: user.id,
    name: 'Alice Liddell',
    preferred_username: 'alice',
    updated_at: Math.floor(user.profile_updated_at.getTime() / 1000),
    email: 'alice@example.com',
    email_verified: true,
    phone_number: '+14155550100',
    phone_number_verified: false,
  });
  const posted = await userinfo({ method: 'POST' });
  assert.equal(posted.status, 200);
  assert.deepEqual(posted.body, got.body);
  const form = await userinfo({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'unrelated=1',
  });
  assert.equal(form.status, 200);
});

test('updated_at is when the profile changed: sign-ins leave it, a profile change moves it', async (t) => {
  const { h, realm, user, creds, userinfo } = await setup(t);
  const created = Math.floor(user.profile_updated_at.getTime() / 1000);
  const accountRow = async () =>
    (
      await h.ctx.db.query<{ updated_at: Date; last_login_at: Date }>(
        'select updated_at, last_login_at from users where realm_id = $1 and id = $2',
        [realm.id, user.id],
      )
    ).rows[0];
  assert.equal((await userinfo()).body.updated_at, created);

  // A second sign-in later moves the account row (last login), not the profile time.
  h.clock.advance(5_000);
  const before = await accountRow();
  const again = await codeFlow(h, realm, creds, { start: { scope: 'openid profile' } });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  const after = await accountRow();
  assert.ok(after && before && after.last_login_at.getTime() > before.last_login_at.getTime());
  assert.ok(after.updated_at.getTime() > before.updated_at.getTime(), 'the sign-in touched the row');
  assert.equal((await userinfo({}, again.body.access_token)).body.updated_at, created);

  // An administrator changes the display name through the users API: updated_at moves to then.
  const admin = await apiCaller(h, realm);
  h.clock.advance(5_000);
  const changedAt = Math.floor(h.clock.now().getTime() / 1000);
  const patched = await admin.call('PATCH', `/users/${user.id}`, { display_name: 'Alice P. Liddell' });
  assert.equal(patched.status, 200);
  assert.equal(((await patched.json()) as { display_name: string }).display_name, 'Alice P. Liddell');
  const changed = (await userinfo({}, again.body.access_token)).body;
  assert.equal(changed.name, 'Alice P. Liddell');
  assert.ok(changed.updated_at >= changedAt && changed.updated_at > created, String(changed.updated_at));

  // The same value again is no change.
  h.clock.advance(5_000);
  await admin.call('PATCH', `/users/${user.id}`, { display_name: 'Alice P. Liddell' });
  assert.equal((await userinfo({}, again.body.access_token)).body.updated_at, changed.updated_at);
});

test('openid alone releases only sub; email alone adds the email claims', async (t) => {
  const { h, realm, user, userinfo, tokens } = await setup(t, 'openid');
  assert.deepEqual((await userinfo()).body, { sub: user.id });
  const emailOnly = await signedLike(h, realm, tokens.body.access_token, { scopes: ['openid', 'email'] });
  assert.deepEqual((await userinfo({}, emailOnly)).body, {
    sub: user.id,
    email: 'alice@example.com',
    email_verified: true,
  });
});

test('a token without openid gets 403 insufficient_scope', async (t) => {
  const { h, realm, userinfo, tokens } = await setup(t);
  const noOpenid = await signedLike(h, realm, tokens.body.access_token, { scopes: ['profile'] });
  const r = await userinfo({}, noOpenid);
  assert.equal(r.status, 403);
  assert.equal(r.body.error, 'insufficient_scope');
  assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer .*error="insufficient_scope"/);
});

test('missing, malformed, foreign-audience and sender-constrained tokens get 401 invalid_token', async (t) => {
  const { h, realm, client, creds, userinfo, tokens } = await setup(t);
  const none = await userinfo({}, null);
  assert.equal(none.status, 401);
  assert.equal(none.headers.get('www-authenticate'), 'Bearer');
  for (const bad of ['abc.def.ghi', `${tokens.body.access_token}x`]) {
    const r = await userinfo({}, bad);
    assert.equal(r.status, 401, bad);
    assert.equal(r.body.error, 'invalid_token');
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/);
  }
  const dpopScheme = await userinfo({ headers: { authorization: `DPoP ${tokens.body.access_token}` } }, null);
  assert.equal(dpopScheme.status, 401);

  const ORDERS = 'https://orders.example.com';
  const res = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(h, realm, client, res, { scopes: ['orders:read'] });
  const orders = await codeFlow(h, realm, creds, { start: { scope: 'orders:read', resource: [ORDERS] } });
  assert.equal(orders.status, 200, JSON.stringify(orders.body));
  const foreign = await userinfo({}, orders.body.access_token);
  assert.equal(foreign.status, 401, 'another audience, and no openid in the grant');
  assert.match(
    foreign.headers.get('www-authenticate') ?? '',
    /^Bearer error="invalid_token", error_description="the access token audience does not include UserInfo; .*openid/,
  );

  const bound = await signedLike(h, realm, tokens.body.access_token, {
    scopes: ['openid'],
    cnf: { jkt: 'A'.repeat(43) },
  });
  assert.equal((await userinfo({}, bound)).status, 401, 'cnf needs proof of possession');
  assert.equal((await userinfo({}, tokens.body.id_token)).status, 401, 'an ID token is no access token');
});

test('an API token whose grant includes openid also carries the UserInfo audience and serves both', async (t) => {
  const { h, realm, client, creds, user, userinfo } = await setup(t);
  const ORDERS = 'https://orders.example.com';
  const res = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(h, realm, client, res, { scopes: ['orders:read'] });
  const orders = await codeFlow(h, realm, creds, {
    start: { scope: 'openid email orders:read', resource: [ORDERS] },
  });
  assert.equal(orders.status, 200, JSON.stringify(orders.body));
  const token = orders.body.access_token as string;
  const origin = h.ctx.config.server.publicOrigin;
  const claims = decodeJwt(token);
  assert.deepEqual(claims.aud, [ORDERS, userinfoAudience(origin, realm.name)], 'the resource first');
  assert.equal(claims.scope, 'openid email orders:read');
  assert.equal(orders.body.scope, 'openid email orders:read');

  const got = await userinfo({}, token);
  assert.equal(got.status, 200, JSON.stringify(got.body));
  assert.deepEqual(got.body, { sub: user.id, email: 'alice@example.com', email_verified: true });

  // The resource server still gets its own audience: offline with jose, and by introspection.
  const jwks = createLocalJWKSet((await json(await h.get(`/realms/${realm.name}/jwks`))).body);
  const verified = await jwtVerify(token, jwks, { issuer: issuerOf(origin, realm.name), audience: ORDERS });
  assert.equal(verified.payload.sub, user.id);
  await registerIntrospector(h, realm, res, client);
  const intro = await oauthPost(h, realm, 'introspect', { token }, creds);
  assert.equal(intro.status, 200);
  assert.equal(intro.body.active, true, JSON.stringify(intro.body));
  assert.deepEqual(intro.body.aud, [ORDERS, userinfoAudience(origin, realm.name)]);

  // Opaque tokens cannot be read by UserInfo, so they keep their one audience.
  const OPAQUE = 'https://opaque.example.com';
  const opaqueRes = await seedResource(h, realm, { audience: OPAQUE, scopes: ['x'], tokenFormat: 'opaque' });
  await seedGrant(h, realm, client, opaqueRes, { scopes: ['x'] });
  const opaque = await codeFlow(h, realm, creds, { start: { scope: 'openid x', resource: [OPAQUE] } });
  assert.equal(opaque.status, 200, JSON.stringify(opaque.body));
  assert.equal(opaque.body.scope, 'x');
});

test('the token in the query or in a POST body is refused with 400 invalid_request', async (t) => {
  const { userinfo, tokens } = await setup(t);
  const query = await userinfo({}, null, `?access_token=${tokens.body.access_token}`);
  assert.equal(query.status, 400);
  assert.equal(query.body.error, 'invalid_request');
  assert.match(query.headers.get('www-authenticate') ?? '', /error="invalid_request"/);
  const alsoHeader = await userinfo(
    {},
    tokens.body.access_token,
    `?access_token=${tokens.body.access_token}`,
  );
  assert.equal(alsoHeader.status, 400);
  const body = await userinfo(
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `access_token=${tokens.body.access_token}`,
    },
    null,
  );
  assert.equal(body.status, 400);
  assert.equal(body.body.error, 'invalid_request');
});

test('live checks: an ended session or a suspended user turns the token away at once', async (t) => {
  const { h, realm, user, userinfo, tokens } = await setup(t);
  assert.equal((await userinfo()).status, 200);
  await h.ctx.db.query(`update users set state = 'suspended' where realm_id = $1 and id = $2`, [
    realm.id,
    user.id,
  ]);
  assert.equal((await userinfo()).status, 401);
  await h.ctx.db.query(`update users set state = 'active' where realm_id = $1 and id = $2`, [
    realm.id,
    user.id,
  ]);
  assert.equal((await userinfo()).status, 200);
  const sid = decodeJwt(tokens.body.access_token).sid as string;
  await h.ctx.db.tx((tx) => revokeSession(tx, realm.id, sid, 'test', h.ctx.clock.now()));
  const ended = await userinfo();
  assert.equal(ended.status, 401);
  assert.equal(ended.body.error, 'invalid_token');
});

test('an unknown realm is 404', async (t) => {
  const { h, tokens } = await setup(t);
  const r = await h.get('/realms/nosuchrealm/oauth/userinfo', {
    headers: { authorization: `Bearer ${tokens.body.access_token}` },
  });
  assert.equal(r.status, 404);
});
