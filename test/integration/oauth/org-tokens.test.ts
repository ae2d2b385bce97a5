// Tokens in an organization's context (spec doc 1, API resource definition requires_organization
// and Authentication 10; doc 2, Organization membership, Revocation exposure and the event
// catalog): the code, grant, refresh family and every token of an organization sign-in carry its
// org_id; membership and organization stay live-checked at refresh, introspection and UserInfo;
// service principals name the organization they act in.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { decodeJwt } from 'jose';
import { userinfoAudience } from '../../../src/kernel/audiences.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import type { Harness } from '../../harness/harness.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import type { JsonResponse } from '../../harness/signin-driver.ts';
import { events, REDIRECT, rows, signinSetup } from '../../harness/signin-kit.ts';
import {
  clientSecret,
  codeFlow,
  oauthPost,
  registerIntrospector,
  seedGrant,
  seedResource,
  seedServiceClient,
  signInForCode,
} from '../../harness/token-kit.ts';

const ORDERS = 'https://orders.example.com';
const LEDGER = 'https://ledger.example.com';
const INVENTORY = 'https://inventory.example.com';
const PLAIN = 'https://plain.example.com';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

type Creds = { clientId: string; secret: string };

async function setup(t: TestContext) {
  const s = await signinSetup(t);
  const { h, realm, client, user } = s;
  const creds: Creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const orders = await seedResource(h, realm, {
    audience: ORDERS,
    scopes: ['orders:read'],
    requiresOrganization: true,
  });
  const ledger = await seedResource(h, realm, {
    audience: LEDGER,
    scopes: ['ledger:read'],
    requiresOrganization: true,
    tokenFormat: 'opaque',
  });
  const plain = await seedResource(h, realm, { audience: PLAIN, scopes: ['plain:read'] });
  for (const [id, scope] of [
    [orders, 'orders:read'],
    [ledger, 'ledger:read'],
    [plain, 'plain:read'],
  ] as const) {
    await seedGrant(h, realm, client, id, { scopes: [scope] });
  }
  const ordersApi = await seedServiceClient(h, realm, 'orders-api');
  await registerIntrospector(h, realm, orders, ordersApi.client);
  await registerIntrospector(h, realm, ledger, ordersApi.client);
  await registerIntrospector(h, realm, plain, ordersApi.client);
  const acme = await seedOrganization(h, realm, { slug: 'acme' });
  const membership = await seedMembership(h, realm, acme, user.id);
  const introspect = (token: string) => oauthPost(h, realm, 'introspect', { token }, ordersApi.creds);
  const refresh = (token: string, extra: Record<string, string> = {}) =>
    oauthPost(h, realm, 'token', { grant_type: 'refresh_token', refresh_token: token, ...extra }, creds);
  const signInTo = async (resource: string, scope: string, start: Record<string, unknown> = {}) => {
    const r = await codeFlow(h, realm, creds, {
      start: { scope: `openid ${scope}`, resource: [resource], ...start },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r;
  };
  return { ...s, creds, orders, ledger, plain, ordersApi, acme, membership, introspect, refresh, signInTo };
}

const setMembership = (h: Harness, realm: RealmRow, id: string, state: string) =>
  h.ctx.db.query('update memberships set state = $3 where realm_id = $1 and id = $2', [realm.id, id, state]);

/** What the organization service does on suspension: the member's grants in it end at once. */
const revokeOrgGrants = (h: Harness, realm: RealmRow, orgId: string) =>
  h.ctx.db.query(
    `update oauth_grants set revoked_at = now(), revoked_reason = 'membership_suspended'
      where realm_id = $1 and org_id = $2 and revoked_at is null`,
    [realm.id, orgId],
  );

const inactive = (r: JsonResponse, why: string) => assert.deepEqual(r.body, { active: false }, why);

test('an organization sign-in carries org_id in code, grant, family, access, ID and refreshed tokens', async (t) => {
  const { h, realm, acme, introspect, refresh, signInTo } = await setup(t);
  const tokens = await signInTo(ORDERS, 'orders:read');
  assert.equal(decodeJwt(tokens.body.access_token).org_id, acme);
  assert.equal(decodeJwt(tokens.body.id_token).org_id, acme);
  const [family] = await rows(h, 'select org_id from refresh_families where realm_id = $1', [realm.id]);
  assert.equal(family?.org_id, acme);
  const seen = await introspect(tokens.body.access_token);
  assert.equal(seen.body.active, true, JSON.stringify(seen.body));
  assert.equal(seen.body.org_id, acme);
  assert.equal(seen.body.authz_version, 1);

  const next = await refresh(tokens.body.refresh_token);
  assert.equal(next.status, 200, JSON.stringify(next.body));
  assert.equal(decodeJwt(next.body.access_token).org_id, acme);
  assert.equal(decodeJwt(next.body.id_token).org_id, acme);
  // Another audience of the same grant (UserInfo) carries it too, and UserInfo checks it live.
  const ui = await refresh(next.body.refresh_token, {
    resource: userinfoAudience(h.ctx.config.server.publicOrigin, realm.name),
  });
  assert.equal(ui.status, 200, JSON.stringify(ui.body));
  assert.equal(decodeJwt(ui.body.access_token).org_id, acme);
  const me = await h.get(`/realms/${realm.name}/oauth/userinfo`, {
    headers: { authorization: `Bearer ${ui.body.access_token}` },
  });
  assert.equal(me.status, 200);
});

test('a suspended membership ends introspection, UserInfo and refresh; so does the revoked organization grant', async (t) => {
  const { h, realm, acme, membership, introspect, refresh, signInTo } = await setup(t);
  const tokens = await signInTo(ORDERS, 'orders:read');
  const ui = await refresh(tokens.body.refresh_token, {
    resource: userinfoAudience(h.ctx.config.server.publicOrigin, realm.name),
  });
  await setMembership(h, realm, membership, 'suspended');
  inactive(await introspect(tokens.body.access_token), 'membership suspended');
  const me = await h.get(`/realms/${realm.name}/oauth/userinfo`, {
    headers: { authorization: `Bearer ${ui.body.access_token}` },
  });
  assert.equal(me.status, 401);
  assert.equal((await refresh(ui.body.refresh_token)).body.error, 'invalid_grant');

  // Reactivated, but the grant was revoked with the suspension (as the organization service does).
  await setMembership(h, realm, membership, 'active');
  const again = await signInTo(ORDERS, 'orders:read');
  await setMembership(h, realm, membership, 'suspended');
  await revokeOrgGrants(h, realm, acme);
  await setMembership(h, realm, membership, 'active');
  inactive(await introspect(again.body.access_token), 'grant revoked');
  assert.equal((await refresh(again.body.refresh_token)).body.error, 'invalid_grant');
});

test('a suspended organization ends its tokens and refuses refresh and code redemption', async (t) => {
  const { h, realm, acme, creds, introspect, refresh, signInTo } = await setup(t);
  const tokens = await signInTo(ORDERS, 'orders:read');
  const pending = await signInForCode(h, realm, 'web-app', {
    start: { scope: 'openid orders:read', resource: [ORDERS] },
  });
  await h.ctx.db.query(`update organizations set state = 'suspended' where realm_id = $1 and id = $2`, [
    realm.id,
    acme,
  ]);
  inactive(await introspect(tokens.body.access_token), 'organization suspended');
  assert.equal((await refresh(tokens.body.refresh_token)).body.error, 'invalid_grant');
  const redeemed = await oauthPost(
    h,
    realm,
    'token',
    {
      grant_type: 'authorization_code',
      code: pending.code,
      redirect_uri: REDIRECT,
      code_verifier: pending.verifier,
    },
    creds,
  );
  assert.equal(redeemed.body.error, 'invalid_grant');
});

test('opaque tokens store org_id and introspect with it', async (t) => {
  const { h, realm, acme, membership, introspect, signInTo } = await setup(t);
  const tokens = await signInTo(LEDGER, 'ledger:read');
  assert.match(tokens.body.access_token, /^pa_at_/);
  const [stored] = await rows(h, 'select org_id from opaque_access_tokens where realm_id = $1', [realm.id]);
  assert.equal(stored?.org_id, acme);
  const seen = await introspect(tokens.body.access_token);
  assert.equal(seen.body.active, true, JSON.stringify(seen.body));
  assert.equal(seen.body.org_id, acme);
  await setMembership(h, realm, membership, 'suspended');
  inactive(await introspect(tokens.body.access_token), 'membership suspended');
});

test('grants are per organization: tokens outside one keep working when its grant ends', async (t) => {
  const { h, realm, acme, user, introspect, refresh, signInTo } = await setup(t);
  const globex = await seedOrganization(h, realm, { slug: 'globex' });
  await seedMembership(h, realm, globex, user.id);
  const plain = await signInTo(PLAIN, 'plain:read');
  assert.equal(decodeJwt(plain.body.access_token).org_id, undefined, 'no organization named or needed');
  assert.equal(decodeJwt(plain.body.id_token).org_id, undefined);
  const inAcme = await signInTo(ORDERS, 'orders:read', { organization: 'acme' });
  const inGlobex = await signInTo(ORDERS, 'orders:read', { organization: globex });
  assert.equal(decodeJwt(inGlobex.body.access_token).org_id, globex);
  const grants = await rows(
    h,
    'select org_id from oauth_grants where realm_id = $1 and revoked_at is null order by org_id nulls first',
    [realm.id],
  );
  assert.deepEqual(
    grants.map((g) => g.org_id),
    [null, ...[acme, globex].sort()],
  );
  await revokeOrgGrants(h, realm, acme);
  inactive(await introspect(inAcme.body.access_token), 'acme grant revoked');
  assert.equal((await introspect(inGlobex.body.access_token)).body.active, true);
  assert.equal((await introspect(plain.body.access_token)).body.active, true);
  assert.equal((await refresh(plain.body.refresh_token)).status, 200);
  // A token without org_id is not checked against any membership.
  await h.ctx.db.query('update memberships set state = $2 where realm_id = $1 and user_id = $3', [
    realm.id,
    'suspended',
    user.id,
  ]);
  assert.equal((await introspect(plain.body.access_token)).body.active, true);
});

test('refresh reuse in an organization names it on the event', async (t) => {
  const { h, realm, acme, refresh, signInTo } = await setup(t);
  const tokens = await signInTo(ORDERS, 'orders:read');
  assert.equal((await refresh(tokens.body.refresh_token)).status, 200);
  assert.equal((await refresh(tokens.body.refresh_token)).body.error, 'invalid_grant');
  const [reuse] = await events(h, realm, 'security.refresh_reuse_detected');
  assert.equal(reuse?.org_id, acme);
});

test('client_credentials: the organization parameter names where the principal acts', async (t) => {
  const { h, realm, orders, plain, acme, introspect } = await setup(t);
  const svc = await seedServiceClient(h, realm, 'billing');
  for (const [id, scope] of [
    [orders, 'orders:read'],
    [plain, 'plain:read'],
  ] as const) {
    await seedGrant(h, realm, svc.client, id, { scopes: [scope], subjectTypes: ['service_principal'] });
  }
  const cc = (extra: Record<string, string>) =>
    oauthPost(h, realm, 'token', { grant_type: 'client_credentials', ...extra }, svc.creds);

  const byId = await cc({ resource: ORDERS, organization: acme });
  assert.equal(byId.status, 200, JSON.stringify(byId.body));
  assert.equal(decodeJwt(byId.body.access_token).org_id, acme);
  assert.equal(
    decodeJwt((await cc({ resource: ORDERS, organization: 'ACME' })).body.access_token).org_id,
    acme,
  );
  const seen = await introspect(byId.body.access_token);
  assert.equal(seen.body.active, true, JSON.stringify(seen.body));
  assert.equal(seen.body.org_id, acme);

  assert.equal((await cc({ resource: ORDERS })).body.error, 'invalid_target', 'organization missing');
  assert.equal((await cc({ resource: ORDERS, organization: 'nowhere' })).body.error, 'invalid_target');
  assert.equal(
    (await cc({ resource: ORDERS, organization: 'acme', scope: 'orders:read' })).status,
    200,
    'allowed_organization_ids null: any organization',
  );
  // A resource without requires_organization takes the organization too, or none.
  assert.equal(
    decodeJwt((await cc({ resource: PLAIN, organization: 'acme' })).body.access_token).org_id,
    acme,
  );
  assert.equal(decodeJwt((await cc({ resource: PLAIN })).body.access_token).org_id, undefined);

  // Restricting the principal to other organizations refuses new tokens and ends issued ones.
  await h.ctx.db.query(
    'update service_principals set allowed_organization_ids = $3 where realm_id = $1 and id = $2',
    [realm.id, svc.principalId, ['org_other']],
  );
  assert.equal((await cc({ resource: ORDERS, organization: acme })).body.error, 'invalid_target');
  inactive(await introspect(byId.body.access_token), 'organization no longer allowed');
  await h.ctx.db.query(
    'update service_principals set allowed_organization_ids = $3 where realm_id = $1 and id = $2',
    [realm.id, svc.principalId, [acme]],
  );
  assert.equal((await cc({ resource: ORDERS, organization: acme })).status, 200);
  await h.ctx.db.query(`update organizations set state = 'suspended' where realm_id = $1 and id = $2`, [
    realm.id,
    acme,
  ]);
  assert.equal((await cc({ resource: ORDERS, organization: acme })).body.error, 'invalid_target');
});

test('token exchange keeps org_id; a target that requires an organization needs one', async (t) => {
  const { h, realm, acme, membership, signInTo } = await setup(t);
  const inventory = await seedResource(h, realm, {
    audience: INVENTORY,
    scopes: ['stock:read'],
    requiresOrganization: true,
  });
  const svc = await seedServiceClient(h, realm, 'orders-worker', [EXCHANGE]);
  await seedGrant(h, realm, svc.client, inventory, {
    scopes: ['stock:read'],
    exchange: { acceptFrom: [ORDERS, PLAIN], maxScopes: ['stock:read'] },
  });
  const exchange = (subject: string) =>
    oauthPost(
      h,
      realm,
      'token',
      {
        grant_type: EXCHANGE,
        subject_token: subject,
        subject_token_type: ACCESS_TOKEN_TYPE,
        resource: INVENTORY,
        scope: 'stock:read',
      },
      svc.creds,
    );
  const tokens = await signInTo(ORDERS, 'orders:read');
  const ex = await exchange(tokens.body.access_token);
  assert.equal(ex.status, 200, JSON.stringify(ex.body));
  const claims = decodeJwt(ex.body.access_token);
  assert.equal(claims.org_id, acme);
  assert.deepEqual(claims.act, { sub: svc.principalId });

  const plain = await signInTo(PLAIN, 'plain:read');
  assert.equal((await exchange(plain.body.access_token)).body.error, 'invalid_target');

  await setMembership(h, realm, membership, 'suspended');
  assert.equal((await exchange(tokens.body.access_token)).body.error, 'invalid_grant');
});

test('a membership past its expires_at ends refresh and introspection before the sweep runs', async (t) => {
  const { h, realm, membership, introspect, refresh, signInTo } = await setup(t);
  const tokens = await signInTo(ORDERS, 'orders:read');
  assert.equal((await introspect(tokens.body.access_token)).body.active, true);
  // The sweep has not recorded the expiry yet: the state still says active.
  await h.ctx.db.query(`update memberships set expires_at = $3 where realm_id = $1 and id = $2`, [
    realm.id,
    membership,
    new Date(h.ctx.clock.now().getTime() - 1000),
  ]);
  inactive(await introspect(tokens.body.access_token), 'membership expired');
  assert.equal((await refresh(tokens.body.refresh_token)).body.error, 'invalid_grant');
});
