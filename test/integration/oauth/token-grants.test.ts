// Refresh rotation and reuse detection, client_credentials for service principals, token
// exchange with exchange_policy, and per-resource access tokens (format, lifetime, scopes).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { count, events, rows, signinSetup } from '../../harness/signin-kit.ts';
import {
  clientSecret,
  codeFlow,
  oauthPost,
  seedGrant,
  seedResource,
  seedServiceClient,
} from '../../harness/token-kit.ts';

const ORDERS = 'https://orders.example.com';

async function setup(t: Parameters<typeof signinSetup>[0]) {
  const s = await signinSetup(t);
  const secret = await clientSecret(s.h, s.realm, s.client);
  return { ...s, creds: { clientId: 'web-app', secret } };
}

test('refresh rotates: the new token works, the old one is refused and revokes the family', async (t) => {
  const { h, realm, user, creds } = await setup(t);
  const first = await codeFlow(h, realm, creds);
  const r1 = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
    creds,
  );
  assert.equal(r1.status, 200, JSON.stringify(r1.body));
  assert.notEqual(r1.body.refresh_token, first.body.refresh_token);
  assert.ok(r1.body.id_token);
  assert.equal(decodeJwt(r1.body.id_token).nonce, undefined);
  const reuse = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
    creds,
  );
  assert.equal(reuse.body.error, 'invalid_grant');
  const after = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'refresh_token', refresh_token: r1.body.refresh_token },
    creds,
  );
  assert.equal(after.body.error, 'invalid_grant', 'the whole family is revoked');
  const ev = await events(h, realm, 'security.refresh_reuse_detected');
  assert.equal(ev.length, 1);
  assert.equal(ev[0]?.data.subject_id, user.id);
  assert.equal(
    await count(
      h,
      `select 1 from outbox where realm_id = $1 and event_type = 'security.alert' and data->>'signal' = 'refresh_reuse'`,
      [realm.id],
    ),
    1,
  );
});

test('a refresh token presented by another client fails and revokes its family', async (t) => {
  const { h, realm, creds } = await setup(t);
  const other = await h.createClient(realm, {
    clientId: 'thief',
    name: 'Thief',
    type: 'web',
    redirectUris: ['https://thief.example.com/cb'],
  });
  const thief = { clientId: 'thief', secret: await clientSecret(h, realm, other) };
  const first = await codeFlow(h, realm, creds);
  const stolen = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
    thief,
  );
  assert.equal(stolen.body.error, 'invalid_grant');
  const owner = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
    creds,
  );
  assert.equal(owner.body.error, 'invalid_grant');
});

test('refresh may narrow scopes but not widen them, and stops when the session ends', async (t) => {
  const { h, realm, creds } = await setup(t);
  const first = await codeFlow(h, realm, creds, { start: { scope: 'openid profile' } });
  const wider = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, scope: 'openid email' },
    creds,
  );
  assert.equal(wider.body.error, 'invalid_scope');
  const narrow = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, scope: 'openid' },
    creds,
  );
  assert.equal(narrow.status, 200);
  assert.equal(narrow.body.scope, 'openid');
  await h.ctx.db.query('update sessions set revoked_at = now() where realm_id = $1', [realm.id]);
  const ended = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'refresh_token', refresh_token: narrow.body.refresh_token },
    creds,
  );
  assert.equal(ended.body.error, 'invalid_grant');
});

test('a resource named at authorization gets its own token: audience, granted scopes only, its lifetime', async (t) => {
  const { h, realm, client, creds } = await setup(t);
  const res = await seedResource(h, realm, {
    audience: ORDERS,
    scopes: ['orders:read', 'orders:write'],
    ttl: 120,
  });
  await seedGrant(h, realm, client, res, { scopes: ['orders:read'] });
  const tokens = await codeFlow(h, realm, creds, {
    start: { scope: 'openid orders:read orders:write', resource: [ORDERS] },
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const claims = decodeJwt(tokens.body.access_token);
  // openid was granted, so the token also serves UserInfo (docs/tokens.md): its audience comes
  // second and the OpenID scopes join the resource's granted ones.
  const userinfo = `${h.ctx.config.server.publicOrigin}/realms/${realm.name}/oauth/userinfo`;
  assert.deepEqual(claims.aud, [ORDERS, userinfo]);
  assert.equal(claims.scope, 'openid orders:read');
  assert.equal(tokens.body.expires_in, 120);
  const jwks = createRemoteJWKSet(new URL(`${h.publicUrl}/realms/${realm.name}/jwks`));
  await jwtVerify(tokens.body.access_token, jwks, { audience: ORDERS, typ: 'at+jwt' });
  // The same grant can buy a UserInfo token through the refresh token.
  const ui = await oauthPost(
    h,
    realm,
    'token',
    {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      resource: `${h.ctx.config.server.publicOrigin}/realms/${realm.name}/oauth/userinfo`,
    },
    creds,
  );
  assert.equal(ui.status, 200);
  assert.equal(ui.body.scope, 'openid');
  const unauthorized = await oauthPost(
    h,
    realm,
    'token',
    {
      grant_type: 'refresh_token',
      refresh_token: ui.body.refresh_token,
      resource: 'https://elsewhere.example.com',
    },
    creds,
  );
  assert.equal(unauthorized.body.error, 'invalid_target');
});

test('opaque resources get opaque tokens whose claims are stored by digest', async (t) => {
  const { h, realm, client, creds } = await setup(t);
  const res = await seedResource(h, realm, {
    audience: ORDERS,
    scopes: ['orders:read'],
    tokenFormat: 'opaque',
  });
  await seedGrant(h, realm, client, res, { scopes: ['orders:read'] });
  const tokens = await codeFlow(h, realm, creds, {
    start: { scope: 'openid orders:read', resource: [ORDERS] },
  });
  assert.match(tokens.body.access_token, /^pa_at_/);
  const stored = await rows(h, 'select claims from opaque_access_tokens where realm_id = $1', [realm.id]);
  assert.equal(stored.length, 1);
  assert.equal(stored[0]?.claims.aud, ORDERS);
  assert.equal(
    await count(h, 'select 1 from opaque_access_tokens where token_digest = $1', [tokens.body.access_token]),
    0,
  );
});

test('client_credentials: the service principal is the subject, scopes stay within the grant', async (t) => {
  const { h, realm } = await setup(t);
  const svc = await seedServiceClient(h, realm, 'billing');
  const res = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read', 'orders:write'] });
  await seedGrant(h, realm, svc.client, res, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const all = await oauthPost(h, realm, 'token', { grant_type: 'client_credentials' }, svc.creds);
  assert.equal(all.status, 200, JSON.stringify(all.body));
  const claims = decodeJwt(all.body.access_token);
  assert.equal(claims.sub, svc.principalId);
  assert.equal(claims.aud, ORDERS);
  assert.equal(claims.scope, 'orders:read');
  assert.equal(all.body.refresh_token, undefined);
  assert.equal(all.body.id_token, undefined);
  const wider = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'client_credentials', resource: ORDERS, scope: 'orders:write' },
    svc.creds,
  );
  assert.equal(wider.body.error, 'invalid_scope');
  const unknown = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'client_credentials', resource: 'https://nope.example.com' },
    svc.creds,
  );
  assert.equal(unknown.body.error, 'invalid_target');
  await h.ctx.db.query(`update service_principals set state = 'disabled' where realm_id = $1`, [realm.id]);
  const disabled = await oauthPost(h, realm, 'token', { grant_type: 'client_credentials' }, svc.creds);
  assert.equal(disabled.body.error, 'unauthorized_client');
});

test('client_credentials needs a grant naming the service_principal subject type', async (t) => {
  const { h, realm } = await setup(t);
  const svc = await seedServiceClient(h, realm, 'billing');
  const res = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(h, realm, svc.client, res, { scopes: ['orders:read'], subjectTypes: ['user'] });
  const r = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'client_credentials', resource: ORDERS },
    svc.creds,
  );
  assert.equal(r.body.error, 'invalid_target');
});

test('a resource that requires an organization gets no token without one', async (t) => {
  const { h, realm } = await setup(t);
  const svc = await seedServiceClient(h, realm, 'billing');
  const res = await seedResource(h, realm, {
    audience: ORDERS,
    scopes: ['orders:read'],
    requiresOrganization: true,
  });
  await seedGrant(h, realm, svc.client, res, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const r = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'client_credentials', resource: ORDERS },
    svc.creds,
  );
  assert.equal(r.body.error, 'invalid_target');
});

test('token exchange: sub stays the user, act.sub is the service, lifetime never beyond the subject token', async (t) => {
  const { h, realm, client, user, creds } = await setup(t);
  const INVENTORY = 'https://inventory.example.com';
  const orders = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read'], ttl: 60 });
  const inventory = await seedResource(h, realm, {
    audience: INVENTORY,
    scopes: ['stock:read', 'stock:write'],
    ttl: 3600,
  });
  await seedGrant(h, realm, client, orders, { scopes: ['orders:read'] });
  const svc = await seedServiceClient(h, realm, 'orders-api', [
    'urn:ietf:params:oauth:grant-type:token-exchange',
  ]);
  await seedGrant(h, realm, svc.client, inventory, {
    scopes: ['stock:read', 'stock:write'],
    exchange: { acceptFrom: [ORDERS], maxScopes: ['stock:read'] },
  });
  const userTokens = await codeFlow(h, realm, creds, {
    start: { scope: 'openid orders:read', resource: [ORDERS] },
  });
  const subject = userTokens.body.access_token;
  const base = {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: subject,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    resource: INVENTORY,
  };
  const ex = await oauthPost(h, realm, 'token', { ...base, scope: 'stock:read' }, svc.creds);
  assert.equal(ex.status, 200, JSON.stringify(ex.body));
  assert.equal(ex.body.issued_token_type, 'urn:ietf:params:oauth:token-type:access_token');
  const c = decodeJwt(ex.body.access_token);
  const s = decodeJwt(subject);
  assert.equal(c.sub, user.id);
  assert.equal(c.aud, INVENTORY);
  assert.deepEqual(c.act, { sub: svc.principalId });
  assert.equal(c.client_id, 'orders-api');
  assert.equal(c.sid, s.sid);
  assert.ok((c.exp as number) <= (s.exp as number));
  const beyond = await oauthPost(h, realm, 'token', { ...base, scope: 'stock:write' }, svc.creds);
  assert.equal(beyond.body.error, 'invalid_scope');
  const wrongSource = await oauthPost(
    h,
    realm,
    'token',
    { ...base, subject_token: ex.body.access_token },
    svc.creds,
  );
  assert.equal(wrongSource.body.error, 'invalid_grant', 'inventory tokens are not accepted as a source');
  const badType = await oauthPost(
    h,
    realm,
    'token',
    { ...base, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' },
    svc.creds,
  );
  assert.equal(badType.body.error, 'invalid_request');
  // A revoked subject token cannot be exchanged.
  await h.ctx.db.query('update sessions set revoked_at = now() where realm_id = $1', [realm.id]);
  const revoked = await oauthPost(h, realm, 'token', base, svc.creds);
  assert.equal(revoked.body.error, 'invalid_grant');
});

test('a service principal with a builtin:admin grant and a role calls the administration API', async (t) => {
  const { h, realm } = await setup(t);
  const { assignRealmRole, findRoleByName } = await import('../../../src/roles/builtin-roles.repo.ts');
  const svc = await seedServiceClient(h, realm, 'automation');
  await seedGrant(h, realm, svc.client, 'builtin:admin', { scopes: [], subjectTypes: ['service_principal'] });
  const token = await oauthPost(h, realm, 'token', { grant_type: 'client_credentials' }, svc.creds);
  assert.equal(token.status, 200, JSON.stringify(token.body));
  assert.equal(
    decodeJwt(token.body.access_token).aud,
    `${h.ctx.config.server.publicOrigin}/api/v1/realms/${realm.name}`,
  );
  const call = () =>
    h.get(`/api/v1/realms/${realm.name}/users`, {
      headers: { authorization: `Bearer ${token.body.access_token}` },
    });
  assert.equal((await call()).status, 403, 'no role yet');
  await h.ctx.db.tx(async (tx) => {
    const role = await findRoleByName(tx, realm.id, 'realm-admin');
    if (!role) throw new Error('no realm-admin role');
    await assignRealmRole(
      tx,
      {
        realmId: realm.id,
        roleId: role.id,
        subjectType: 'service_principal',
        subjectId: svc.principalId,
        source: 'test',
      },
      h.ctx.clock.now(),
    );
  });
  assert.equal((await call()).status, 200);
  await h.ctx.db.query(`update clients set state = 'disabled' where realm_id = $1 and id = $2`, [
    realm.id,
    svc.client.id,
  ]);
  assert.equal((await call()).status, 401, 'a disabled client takes its tokens with it');
});
