// POST /realms/{realm}/oauth/revoke (RFC 7009): a client ends its own refresh tokens (the whole
// family), JWT access tokens (jti record) and opaque tokens; anything else is a quiet 200.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from 'jose';
import { audits, count, rows, signinSetup } from '../../harness/signin-kit.ts';
import {
  clientSecret,
  codeFlow,
  oauthPost,
  seedGrant,
  seedResource,
  seedServiceClient,
} from '../../harness/token-kit.ts';

const ORDERS = 'https://orders.example.com';

async function setup(t: Parameters<typeof signinSetup>[0], opts: { opaque?: boolean } = {}) {
  const s = await signinSetup(t);
  const { h, realm, client } = s;
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const orders = await seedResource(h, realm, {
    audience: ORDERS,
    scopes: ['orders:read'],
    tokenFormat: opts.opaque ? 'opaque' : 'jwt',
  });
  await seedGrant(h, realm, client, orders, { scopes: ['orders:read'] });
  const api = await seedServiceClient(h, realm, 'orders-api');
  await h.ctx.db.query(
    'insert into resource_introspectors (realm_id, resource_id, client_row_id, created_at) values ($1, $2, $3, now())',
    [realm.id, orders, api.client.id],
  );
  const other = await h.createClient(realm, {
    clientId: 'other-app',
    name: 'Other',
    type: 'web',
    redirectUris: ['https://other.example.com/cb'],
  });
  const otherCreds = { clientId: 'other-app', secret: await clientSecret(h, realm, other) };
  const tokens = await codeFlow(h, realm, creds, {
    start: { scope: 'openid orders:read', resource: [ORDERS] },
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const active = async (token: string) =>
    (await oauthPost(h, realm, 'introspect', { token }, api.creds)).body.active as boolean;
  const refresh = (token: string) =>
    oauthPost(h, realm, 'token', { grant_type: 'refresh_token', refresh_token: token }, creds);
  return { ...s, creds, otherCreds, tokens, active, refresh };
}

test('revoking a refresh token ends its whole family and is audited once', async (t) => {
  const { h, realm, creds, tokens, refresh } = await setup(t);
  const rotated = await refresh(tokens.body.refresh_token);
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
  const r = await oauthPost(
    h,
    realm,
    'revoke',
    { token: rotated.body.refresh_token, token_type_hint: 'refresh_token' },
    creds,
  );
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('cache-control'), 'no-store');
  const family = await rows(
    h,
    'select revoked_at, revoked_reason from refresh_families where realm_id = $1',
    [realm.id],
  );
  assert.equal(family.length, 1);
  assert.ok(family[0]?.revoked_at);
  assert.equal(family[0]?.revoked_reason, 'revoked_by_client');
  assert.equal((await refresh(rotated.body.refresh_token)).body.error, 'invalid_grant');
  // Again: still 200, nothing more to audit.
  assert.equal(
    (await oauthPost(h, realm, 'revoke', { token: rotated.body.refresh_token }, creds)).status,
    200,
  );
  const audited = await audits(h, realm, 'token.revoked');
  assert.equal(audited.length, 1);
  assert.equal(audited[0]?.actor_type, 'client');
  assert.equal(audited[0]?.actor_id, 'web-app');
  assert.equal(audited[0]?.data.token_type, 'refresh_token');
  assert.equal(
    JSON.stringify(audited[0]?.data).includes(rotated.body.refresh_token),
    false,
    'no token in the audit',
  );
});

test("another client's refresh token is left alone, with the same 200", async (t) => {
  const { h, realm, otherCreds, tokens, refresh } = await setup(t);
  const r = await oauthPost(h, realm, 'revoke', { token: tokens.body.refresh_token }, otherCreds);
  assert.equal(r.status, 200);
  assert.equal(
    await count(h, 'select 1 from refresh_families where realm_id = $1 and revoked_at is not null', [
      realm.id,
    ]),
    0,
  );
  assert.equal((await refresh(tokens.body.refresh_token)).status, 200);
  assert.equal((await audits(h, realm, 'token.revoked')).length, 0);
});

test('revoking a JWT access token records its jti until it expires; introspection and UserInfo refuse it', async (t) => {
  const { h, realm, creds, tokens, active } = await setup(t);
  const at = tokens.body.access_token as string;
  assert.equal(await active(at), true);
  const r = await oauthPost(h, realm, 'revoke', { token: at, token_type_hint: 'access_token' }, creds);
  assert.equal(r.status, 200);
  const claims = decodeJwt(at);
  const [record] = await rows(h, 'select * from token_revocations where realm_id = $1', [realm.id]);
  assert.equal(record?.jti, claims.jti);
  assert.ok(
    new Date(record?.expires_at).getTime() >= (claims.exp as number) * 1000,
    'kept at least until exp',
  );
  assert.equal(await active(at), false);
  assert.equal((await audits(h, realm, 'token.revoked'))[0]?.data.jti, claims.jti);

  // A UserInfo token revoked the same way is refused by UserInfo at once.
  const ui = await codeFlow(h, realm, creds, { start: { scope: 'openid' } });
  const bearer = { authorization: `Bearer ${ui.body.access_token}` };
  assert.equal((await h.get(`/realms/${realm.name}/oauth/userinfo`, { headers: bearer })).status, 200);
  await oauthPost(h, realm, 'revoke', { token: ui.body.access_token }, creds);
  assert.equal((await h.get(`/realms/${realm.name}/oauth/userinfo`, { headers: bearer })).status, 401);
});

test("another client's access token stays active", async (t) => {
  const { h, realm, otherCreds, tokens, active } = await setup(t);
  assert.equal(
    (await oauthPost(h, realm, 'revoke', { token: tokens.body.access_token }, otherCreds)).status,
    200,
  );
  assert.equal(await count(h, 'select 1 from token_revocations where realm_id = $1', [realm.id]), 0);
  assert.equal(await active(tokens.body.access_token), true);
});

test('revoking an opaque access token marks its record; its owner only', async (t) => {
  const { h, realm, creds, otherCreds, tokens, active } = await setup(t, { opaque: true });
  const at = tokens.body.access_token as string;
  assert.match(at, /^pa_at_/);
  await oauthPost(h, realm, 'revoke', { token: at }, otherCreds);
  assert.equal(await active(at), true, 'a foreign client cannot revoke it');
  assert.equal((await oauthPost(h, realm, 'revoke', { token: at }, creds)).status, 200);
  assert.equal(
    await count(h, 'select 1 from opaque_access_tokens where realm_id = $1 and revoked_at is not null', [
      realm.id,
    ]),
    1,
  );
  assert.equal(await active(at), false);
  assert.equal((await audits(h, realm, 'token.revoked')).length, 1);
});

test('unknown, malformed and forged tokens answer 200 and change nothing', async (t) => {
  const { h, realm, creds, tokens } = await setup(t);
  const forged = `${tokens.body.access_token.split('.').slice(0, 2).join('.')}.AAAA`;
  for (const token of [
    'nothing-like-a-token',
    'pa_rt_unknown',
    `pa_at_${'A'.repeat(43)}`,
    `pa_rt_${'A'.repeat(43)}`,
    forged,
    'a'.repeat(20_000),
  ]) {
    const r = await oauthPost(h, realm, 'revoke', { token }, creds);
    assert.equal(r.status, 200, token.slice(0, 20));
  }
  assert.equal(await count(h, 'select 1 from token_revocations where realm_id = $1', [realm.id]), 0);
  assert.equal((await audits(h, realm, 'token.revoked')).length, 0);
});

test('client authentication is required; a missing token is invalid_request', async (t) => {
  const { h, realm, creds, tokens } = await setup(t);
  const anonymous = await oauthPost(h, realm, 'revoke', { token: tokens.body.refresh_token });
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.body.error, 'invalid_client');
  const wrong = await oauthPost(
    h,
    realm,
    'revoke',
    { token: tokens.body.refresh_token },
    { ...creds, secret: 'pa_cs_wrong' },
  );
  assert.equal(wrong.status, 401);
  assert.equal(
    await count(h, 'select 1 from refresh_families where realm_id = $1 and revoked_at is not null', [
      realm.id,
    ]),
    0,
  );
  const missing = await oauthPost(h, realm, 'revoke', {}, creds);
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error, 'invalid_request');
  // A public client authenticates with its client_id alone and may revoke (its own tokens).
  await h.createClient(realm, {
    clientId: 'spa',
    name: 'SPA',
    type: 'spa',
    redirectUris: ['https://spa.example.com/cb'],
  });
  const pub = await oauthPost(h, realm, 'revoke', { token: tokens.body.refresh_token, client_id: 'spa' });
  assert.equal(pub.status, 200);
  assert.equal(
    await count(h, 'select 1 from refresh_families where realm_id = $1 and revoked_at is not null', [
      realm.id,
    ]),
    0,
  );
});
