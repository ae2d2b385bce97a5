// POST /realms/{realm}/oauth/introspect (RFC 7662; spec doc 2, Revocation exposure): confidential
// introspectors of a resource see its tokens with the live checks applied; everyone and everything
// else gets exactly {active: false}.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { revokeAccount, revokeSession } from '../../../src/sessions/grants.repo.ts';
import type { JsonResponse } from '../../harness/signin-driver.ts';
import { type MovableClock, movableClock, signinSetup } from '../../harness/signin-kit.ts';
import {
  clientSecret,
  codeFlow,
  oauthPost,
  registerIntrospector,
  seedGrant,
  seedResource,
  seedServiceClient,
} from '../../harness/token-kit.ts';

const ORDERS = 'https://orders.example.com';
const INVENTORY = 'https://inventory.example.com';

type Creds = { clientId: string; secret: string };

async function setup(
  t: Parameters<typeof signinSetup>[0],
  opts: { opaque?: boolean; clock?: MovableClock } = {},
) {
  const s = await signinSetup(t, opts.clock ? { clock: opts.clock } : {});
  const { h, realm, client } = s;
  const creds: Creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const orders = await seedResource(h, realm, {
    audience: ORDERS,
    scopes: ['orders:read'],
    tokenFormat: opts.opaque ? 'opaque' : 'jwt',
  });
  await seedGrant(h, realm, client, orders, { scopes: ['orders:read'] });
  const inventory = await seedResource(h, realm, { audience: INVENTORY, scopes: ['stock:read'] });
  const ordersApi = await seedServiceClient(h, realm, 'orders-api');
  const inventoryApi = await seedServiceClient(h, realm, 'inventory-api');
  await registerIntrospector(h, realm, orders, ordersApi.client);
  await registerIntrospector(h, realm, inventory, inventoryApi.client);
  const tokens = await codeFlow(h, realm, creds, {
    start: { scope: 'openid orders:read', resource: [ORDERS] },
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const introspect = (token: string, as: Creds = ordersApi.creds, extra: Record<string, string> = {}) =>
    oauthPost(h, realm, 'introspect', { token, ...extra }, as);
  return { ...s, creds, orders, ordersApi, inventoryApi, tokens, introspect };
}

const assertInactive = (r: JsonResponse, why: string) => {
  assert.equal(r.status, 200, why);
  assert.deepEqual(r.body, { active: false }, why);
};

test('an introspector of the resource sees an active token with its claims and the current authz_version', async (t) => {
  const { h, realm, user, tokens, introspect } = await setup(t);
  const at = tokens.body.access_token as string;
  const claims = decodeJwt(at);
  const r = await introspect(at);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(r.body, {
    active: true,
    // The grant has openid, so the token also serves UserInfo (docs/tokens.md): both show.
    scope: 'openid orders:read',
    client_id: 'web-app',
    sub: user.id,
    aud: [ORDERS, `${h.ctx.config.server.publicOrigin}/realms/${realm.name}/oauth/userinfo`],
    iss: `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`,
    exp: claims.exp,
    iat: claims.iat,
    jti: claims.jti,
    token_type: 'Bearer',
    sid: claims.sid,
    auth_time: claims.auth_time,
    acr: claims.acr,
    amr: claims.amr,
    authz_version: 1,
  });
  // Role changes are not in the token; introspection reports the version as it is now.
  await h.ctx.db.query('update users set authz_version = 7 where realm_id = $1 and id = $2', [
    realm.id,
    user.id,
  ]);
  assert.equal((await introspect(at)).body.authz_version, 7);
  // The hint is accepted and changes nothing, even when it is wrong.
  assert.equal((await introspect(at, undefined, { token_type_hint: 'refresh_token' })).body.active, true);
});

test('an introspector of another resource, or of none, sees {active: false}', async (t) => {
  const { h, realm, tokens, introspect, inventoryApi } = await setup(t);
  assertInactive(
    await introspect(tokens.body.access_token, inventoryApi.creds),
    'introspector of another resource',
  );
  const bystander = await seedServiceClient(h, realm, 'bystander');
  assertInactive(await introspect(tokens.body.access_token, bystander.creds), 'registered nowhere');
  const otherWeb = await h.createClient(realm, {
    clientId: 'other-web',
    name: 'Other',
    type: 'web',
    redirectUris: ['https://other.example.com/cb'],
  });
  const otherCreds = { clientId: 'other-web', secret: await clientSecret(h, realm, otherWeb) };
  assertInactive(await introspect(tokens.body.access_token, otherCreds), 'a web client registered nowhere');
});

test('the caller must authenticate as a confidential client', async (t) => {
  const { h, realm, tokens, ordersApi } = await setup(t);
  await h.createClient(realm, {
    clientId: 'spa',
    name: 'SPA',
    type: 'spa',
    redirectUris: ['https://spa.example.com/cb'],
  });
  const asPublic = await oauthPost(h, realm, 'introspect', {
    token: tokens.body.access_token,
    client_id: 'spa',
  });
  assert.equal(asPublic.status, 401);
  assert.equal(asPublic.body.error, 'invalid_client');
  const anonymous = await oauthPost(h, realm, 'introspect', { token: tokens.body.access_token });
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.body.error, 'invalid_client');
  const wrong = await oauthPost(
    h,
    realm,
    'introspect',
    { token: tokens.body.access_token },
    {
      clientId: 'orders-api',
      secret: `${ordersApi.creds.secret.slice(0, -1)}x`,
    },
  );
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error, 'invalid_client');
  assert.equal(wrong.body.active, undefined);
});

test('a missing or repeated token parameter is invalid_request', async (t) => {
  const { h, realm, tokens, ordersApi } = await setup(t);
  const missing = await oauthPost(h, realm, 'introspect', {}, ordersApi.creds);
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error, 'invalid_request');
  const twice = await oauthPost(
    h,
    realm,
    'introspect',
    { token: [tokens.body.access_token, 'x'] },
    ordersApi.creds,
  );
  assert.equal(twice.status, 400);
  assert.equal(twice.body.error, 'invalid_request');
});

test('each live check makes an active token inactive: revoked jti, disabled client, suspended user, ended session, account revocation, disabled resource, ended grant', async (t) => {
  const cases: [string, (x: Awaited<ReturnType<typeof setup>>) => Promise<unknown>][] = [
    [
      'revoked jti',
      ({ h, realm, tokens, creds }) =>
        oauthPost(h, realm, 'revoke', { token: tokens.body.access_token }, creds),
    ],
    [
      'disabled client',
      ({ h, realm }) =>
        h.ctx.db.query(
          `update clients set state = 'disabled' where realm_id = $1 and client_id = 'web-app'`,
          [realm.id],
        ),
    ],
    [
      'suspended user',
      ({ h, realm, user }) =>
        h.ctx.db.query(`update users set state = 'suspended' where realm_id = $1 and id = $2`, [
          realm.id,
          user.id,
        ]),
    ],
    [
      'revoked session',
      ({ h, realm, tokens }) =>
        h.ctx.db.tx((tx) =>
          revokeSession(
            tx,
            realm.id,
            decodeJwt(tokens.body.access_token).sid as string,
            'test',
            h.ctx.clock.now(),
          ),
        ),
    ],
    [
      'account revocation',
      ({ h, realm, user }) =>
        h.ctx.db.tx((tx) => revokeAccount(tx, realm.id, user.id, 'test', h.ctx.clock.now())),
    ],
    [
      'disabled resource',
      ({ h, realm, orders }) =>
        h.ctx.db.query(`update resources set state = 'disabled' where realm_id = $1 and id = $2`, [
          realm.id,
          orders,
        ]),
    ],
    [
      'revoked grant',
      ({ h, realm }) =>
        h.ctx.db.query('update oauth_grants set revoked_at = now() where realm_id = $1', [realm.id]),
    ],
  ];
  for (const [name, change] of cases) {
    await t.test(name, async (st) => {
      const x = await setup(st);
      assert.equal(
        (await x.introspect(x.tokens.body.access_token)).body.active,
        true,
        `${name}: active before`,
      );
      await change(x);
      assertInactive(await x.introspect(x.tokens.body.access_token), name);
    });
  }
});

test('the user-level revocation record alone ends a token issued in the revoking second', async (t) => {
  const { h, realm, user, tokens, introspect } = await setup(t);
  const at = tokens.body.access_token as string;
  // Only the record: the session and the grant stay live.
  await h.ctx.db.query(
    'insert into user_revocations (realm_id, user_id, revoked_before) values ($1, $2, to_timestamp($3))',
    [realm.id, user.id, decodeJwt(at).iat],
  );
  assertInactive(await introspect(at), 'issued at the revocation second');
});

test('expired tokens are inactive once past the clock tolerance', async (t) => {
  const clock = movableClock();
  const { introspect, tokens, h } = await setup(t, { clock });
  const at = tokens.body.access_token as string;
  clock.advance(
    (decodeJwt(at).exp as number) * 1000 - clock.now().getTime() + h.ctx.config.tokens.clockSkewMs - 1000,
  );
  assert.equal((await introspect(at)).body.active, true, 'inside the tolerance');
  clock.advance(2000);
  assertInactive(await introspect(at), 'past exp plus tolerance');
});

test('opaque tokens are found by digest and answer like JWTs; revoked or expired ones are inactive', async (t) => {
  const clock = movableClock();
  const { h, realm, user, tokens, introspect, creds } = await setup(t, { opaque: true, clock });
  const at = tokens.body.access_token as string;
  assert.match(at, /^pa_at_/);
  const r = await introspect(at);
  assert.equal(r.body.active, true, JSON.stringify(r.body));
  assert.equal(r.body.sub, user.id);
  assert.equal(r.body.aud, ORDERS);
  assert.equal(r.body.client_id, 'web-app');
  assert.equal(r.body.token_type, 'Bearer');
  assert.equal(r.body.authz_version, 1);
  assertInactive(
    await introspect(`${at.slice(0, -1)}${at.endsWith('A') ? 'B' : 'A'}`),
    'unknown opaque token',
  );
  // Suspension of the user reaches opaque tokens through the same live checks.
  await h.ctx.db.query(`update users set state = 'suspended' where realm_id = $1 and id = $2`, [
    realm.id,
    user.id,
  ]);
  assertInactive(await introspect(at), 'suspended user');
  await h.ctx.db.query(`update users set state = 'active' where realm_id = $1 and id = $2`, [
    realm.id,
    user.id,
  ]);
  assert.equal((await introspect(at)).body.active, true);

  const second = await codeFlow(h, realm, creds, {
    start: { scope: 'openid orders:read', resource: [ORDERS] },
  });
  assert.equal((await oauthPost(h, realm, 'revoke', { token: at }, creds)).status, 200);
  assertInactive(await introspect(at), 'revoked opaque token');
  const other = second.body.access_token as string;
  assert.equal((await introspect(other)).body.active, true);
  clock.advance(300_000 + h.ctx.config.tokens.clockSkewMs + 1000);
  assertInactive(await introspect(other), 'expired opaque token');
});

test('forged tokens are inactive: alg none, HS256 keyed with the public key, a foreign key under our kid, a changed payload', async (t) => {
  const { h, realm, tokens, introspect } = await setup(t);
  const at = tokens.body.access_token as string;
  const claims = decodeJwt(at);
  const { kid } = decodeProtectedHeader(at);
  assertInactive(await introspect(new UnsecuredJWT(claims).encode()), 'alg none');
  const unsecuredTyped = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid })).toString('base64url')}.${at.split('.')[1]}.`;
  assertInactive(await introspect(unsecuredTyped), 'alg none with our kid and typ');

  const published = (await (await h.get(`/realms/${realm.name}/jwks`)).json()) as {
    keys: Record<string, unknown>[];
  };
  const publicJwk = published.keys.find((k) => k.kid === kid);
  assert.ok(publicJwk);
  const hmacKey = new TextEncoder().encode(JSON.stringify(publicJwk));
  const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' }).sign(hmacKey);
  assertInactive(await introspect(hs), 'HS256 with the public key as secret');

  const alg = publicJwk.alg as string;
  const foreign = await generateKeyPair(alg);
  const forged = await new SignJWT(claims)
    .setProtectedHeader({ alg, kid, typ: 'at+jwt' })
    .sign(foreign.privateKey);
  assertInactive(await introspect(forged), 'foreign key under our kid');

  const [header, , signature] = at.split('.');
  const widened = Buffer.from(JSON.stringify({ ...claims, scope: 'orders:read orders:admin' })).toString(
    'base64url',
  );
  assertInactive(await introspect(`${header}.${widened}.${signature}`), 'payload changed after signing');
  assertInactive(await introspect('not-a-token'), 'garbage');
});

test('refresh tokens, ID tokens and tokens of the built-in audiences are not introspectable', async (t) => {
  const { h, realm, tokens, introspect, creds, ordersApi } = await setup(t);
  assertInactive(await introspect(tokens.body.refresh_token), 'refresh token');
  assertInactive(
    await introspect(tokens.body.refresh_token, undefined, { token_type_hint: 'refresh_token' }),
    'hinted',
  );
  assertInactive(await introspect(tokens.body.id_token), 'ID token');
  const ui = await codeFlow(h, realm, creds, { start: { scope: 'openid' } });
  // Even a registration for a built-in id gives no access (built-in audiences have no introspectors).
  await registerIntrospector(h, realm, 'builtin:userinfo', ordersApi.client);
  assertInactive(await introspect(ui.body.access_token), 'userinfo token');
});

test('service principal tokens introspect with the principal; a disabled principal ends them', async (t) => {
  const { h, realm, orders, introspect } = await setup(t);
  const svc = await seedServiceClient(h, realm, 'billing');
  await seedGrant(h, realm, svc.client, orders, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const cc = await oauthPost(
    h,
    realm,
    'token',
    { grant_type: 'client_credentials', resource: ORDERS },
    svc.creds,
  );
  assert.equal(cc.status, 200, JSON.stringify(cc.body));
  const r = await introspect(cc.body.access_token);
  assert.equal(r.body.active, true, JSON.stringify(r.body));
  assert.equal(r.body.sub, svc.principalId);
  assert.equal(r.body.client_id, 'billing');
  assert.equal(r.body.sid, undefined);
  assert.equal(r.body.authz_version, 1);
  await h.ctx.db.query(`update service_principals set state = 'disabled' where realm_id = $1 and id = $2`, [
    realm.id,
    svc.principalId,
  ]);
  assertInactive(await introspect(cc.body.access_token), 'disabled principal');
});

test('realm suspension leaves unexpired tokens introspectable; an unknown realm is 404', async (t) => {
  const { h, realm, tokens, introspect, ordersApi } = await setup(t);
  await h.ctx.db.query(`update realms set state = 'suspended' where id = $1`, [realm.id]);
  h.ctx.realms.forget(realm.name);
  assert.equal((await introspect(tokens.body.access_token)).body.active, true);
  const unknown = await oauthPost(
    h,
    { ...realm, name: 'nosuchrealm' },
    'introspect',
    { token: 'x' },
    ordersApi.creds,
  );
  assert.equal(unknown.status, 404);
});

test('an exchanged token shows its actor, and lives only while the exchanging client keeps its grant', async (t) => {
  const { h, realm, tokens, introspect, inventoryApi } = await setup(t);
  const inventory = (
    await h.ctx.db.query<{ id: string }>('select id from resources where realm_id = $1 and audience = $2', [
      realm.id,
      INVENTORY,
    ])
  ).rows[0]?.id as string;
  const svc = await seedServiceClient(h, realm, 'orders-worker', [
    'urn:ietf:params:oauth:grant-type:token-exchange',
  ]);
  await seedGrant(h, realm, svc.client, inventory, {
    scopes: ['stock:read'],
    exchange: { acceptFrom: [ORDERS], maxScopes: ['stock:read'] },
  });
  const ex = await oauthPost(
    h,
    realm,
    'token',
    {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: tokens.body.access_token,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: INVENTORY,
    },
    svc.creds,
  );
  assert.equal(ex.status, 200, JSON.stringify(ex.body));
  const r = await introspect(ex.body.access_token, inventoryApi.creds);
  assert.equal(r.body.active, true, JSON.stringify(r.body));
  assert.deepEqual(r.body.act, { sub: svc.principalId });
  assert.equal(r.body.client_id, 'orders-worker');
  assert.equal(r.body.aud, INVENTORY);
  await h.ctx.db.query('delete from client_resource_grants where realm_id = $1 and client_row_id = $2', [
    realm.id,
    svc.client.id,
  ]);
  assertInactive(await introspect(ex.body.access_token, inventoryApi.creds), 'exchange grant removed');
});
