// An exchanged token (RFC 8693) lives only while the user's grant behind its subject token does
// (spec doc 2, Revocation exposure: an active grant for user and exchange tokens): introspection,
// the administration API and decisions see it end with that grant, also when a suspended
// membership or organization is reactivated afterwards.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { decodeJwt } from 'jose';
import { adminAudience } from '../../../src/kernel/audiences.ts';
import { ACCESS_TOKEN_TYPE } from '../../../src/oauth/grants/grant-context.ts';
import { TOKEN_EXCHANGE as EXCHANGE } from '../../../src/oauth/grants/token-exchange.grant.ts';
import { assignRealmRole, findRoleByName } from '../../../src/roles/builtin-roles.repo.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { signinSetup } from '../../harness/signin-kit.ts';
import {
  clientSecret,
  codeFlow,
  oauthPost,
  registerIntrospector,
  seedGrant,
  seedResource,
  seedServiceClient,
} from '../../harness/token-kit.ts';
import { checkBody } from '../decisions/decision-kit.ts';

const ORDERS = 'https://orders.example.com';
const PLAIN = 'https://plain.example.com';
const INVENTORY = 'https://inventory.example.com';
const LEDGER = 'https://ledger.example.com';

async function setup(t: TestContext) {
  const { h, realm, client, user } = await signinSetup(t);
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const orders = await seedResource(h, realm, {
    audience: ORDERS,
    scopes: ['orders:read'],
    requiresOrganization: true,
  });
  const plain = await seedResource(h, realm, { audience: PLAIN, scopes: ['plain:read'] });
  await seedGrant(h, realm, client, orders, { scopes: ['orders:read'] });
  await seedGrant(h, realm, client, plain, { scopes: ['plain:read'] });
  const inventory = await seedResource(h, realm, { audience: INVENTORY, scopes: ['stock:read'] });
  const ledger = await seedResource(h, realm, {
    audience: LEDGER,
    scopes: ['ledger:read'],
    tokenFormat: 'opaque',
  });
  // The calling service may exchange the user's tokens for its inventory, ledger and admin calls.
  const svc = await seedServiceClient(h, realm, 'orders-worker', [EXCHANGE]);
  const acceptFrom = [ORDERS, PLAIN];
  await seedGrant(h, realm, svc.client, inventory, {
    scopes: ['stock:read'],
    // Its own tokens too: a nested exchange.
    exchange: { acceptFrom: [...acceptFrom, INVENTORY], maxScopes: ['stock:read'] },
  });
  await seedGrant(h, realm, svc.client, ledger, {
    scopes: ['ledger:read'],
    exchange: { acceptFrom, maxScopes: ['ledger:read'] },
  });
  await seedGrant(h, realm, svc.client, 'builtin:admin', {
    scopes: [],
    exchange: { acceptFrom, maxScopes: [] },
  });
  await registerIntrospector(h, realm, inventory, svc.client);
  await registerIntrospector(h, realm, ledger, svc.client);
  await registerIntrospector(h, realm, orders, svc.client);
  await registerIntrospector(h, realm, plain, svc.client);

  const acme = await seedOrganization(h, realm, { slug: 'acme' });
  const membership = await seedMembership(h, realm, acme, user.id);
  const admin = await apiCaller(h, realm);
  const decider = await apiCaller(h, realm, { roles: ['resource-server'] });

  // Alice administers the realm from an MFA session, so her exchanged admin token is a real bearer
  // (granted after the sign-in, which would otherwise ask an administrator to enroll TOTP).
  const makeAdmin = () =>
    h.ctx.db.tx(async (tx) => {
      const role = await findRoleByName(tx, realm.id, 'realm-admin');
      if (!role) throw new Error('no realm-admin role');
      await assignRealmRole(
        tx,
        { realmId: realm.id, roleId: role.id, subjectType: 'user', subjectId: user.id, source: 'test' },
        h.ctx.clock.now(),
      );
      await tx.query('update sessions set mfa = true where realm_id = $1 and user_id = $2', [
        realm.id,
        user.id,
      ]);
    });
  const signInTo = async (resource: string, scope: string) => {
    const r = await codeFlow(h, realm, creds, { start: { scope: `openid ${scope}`, resource: [resource] } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await makeAdmin();
    return r.body.access_token as string;
  };
  const exchange = async (subject: string, resource: string) => {
    const r = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TOKEN_TYPE, resource },
      svc.creds,
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.access_token as string;
  };
  /** The subject token and what the service got for it, three times over. */
  const exchangeAll = async (subject: string) => ({
    subject,
    jwt: await exchange(subject, INVENTORY),
    opaque: await exchange(subject, LEDGER),
    admin: await exchange(subject, adminAudience(h.ctx.config.server.publicOrigin, realm.name)),
  });
  type Exchanged = Awaited<ReturnType<typeof exchangeAll>>;

  const introspect = async (token: string) =>
    (await oauthPost(h, realm, 'introspect', { token }, svc.creds)).body.active;
  const adminStatus = async (token: string) =>
    (
      await h.get(`/api/v1/realms/${realm.name}/users`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).status;
  const decision = async (token: string) => {
    const res = await decider.call('POST', '/authorization/check', checkBody(token, 'documents.read'));
    assert.equal(res.status, 200);
    return ((await res.json()) as { reason_code: string }).reason_code;
  };
  const assertLive = async (x: Exchanged) => {
    for (const token of [x.subject, x.jwt, x.opaque]) assert.equal(await introspect(token), true);
    assert.equal(await adminStatus(x.admin), 200);
    assert.notEqual(await decision(x.jwt), 'SUBJECT_TOKEN_INACTIVE');
  };
  const assertEnded = async (x: Exchanged, why: string) => {
    assert.equal(await introspect(x.subject), false, `subject token: ${why}`);
    assert.equal(await introspect(x.jwt), false, `exchanged JWT: ${why}`);
    assert.equal(await introspect(x.opaque), false, `exchanged opaque token: ${why}`);
    assert.equal(await adminStatus(x.admin), 401, `exchanged admin bearer: ${why}`);
    assert.equal(await decision(x.jwt), 'SUBJECT_TOKEN_INACTIVE', `decision subject: ${why}`);
    assert.equal(await decision(x.opaque), 'SUBJECT_TOKEN_INACTIVE', `opaque decision subject: ${why}`);
  };
  return {
    ...{ h, realm, user, acme, membership, admin },
    ...{ signInTo, exchangeAll, exchange, introspect, assertLive, assertEnded },
  };
}

test('exchanged tokens name the client of the grant behind them, through nested exchanges', async (t) => {
  const { signInTo, exchange } = await setup(t);
  const subject = await signInTo(PLAIN, 'plain:read');
  const once = await exchange(subject, INVENTORY);
  assert.equal(decodeJwt(once).client_id, 'orders-worker');
  assert.equal(decodeJwt(once).grant_client_id, 'web-app');
  assert.equal(decodeJwt(subject).grant_client_id, undefined, 'a user token names its grant by client_id');
  const twice = await exchange(once, INVENTORY);
  assert.ok(decodeJwt(twice).act);
  assert.equal(decodeJwt(twice).grant_client_id, 'web-app');
});

test('a suspended and reactivated membership leaves every exchanged token inactive', async (t) => {
  const { acme, membership, admin, signInTo, exchangeAll, assertLive, assertEnded } = await setup(t);
  const x = await exchangeAll(await signInTo(ORDERS, 'orders:read'));
  assert.equal(decodeJwt(x.jwt).org_id, acme);
  await assertLive(x);
  const path = `/organizations/${acme}/members/${membership}`;
  assert.equal((await admin.call('POST', `${path}/suspend`, { reason: 'test' })).status, 200);
  assert.equal((await admin.call('POST', `${path}/reactivate`, { reason: 'test' })).status, 200);
  await assertEnded(x, 'membership suspended and reactivated');
});

test('a suspended and reactivated organization leaves every exchanged token inactive', async (t) => {
  const { acme, admin, signInTo, exchangeAll, assertLive, assertEnded } = await setup(t);
  const x = await exchangeAll(await signInTo(ORDERS, 'orders:read'));
  await assertLive(x);
  assert.equal((await admin.call('POST', `/organizations/${acme}/suspend`, {})).status, 200);
  assert.equal((await admin.call('POST', `/organizations/${acme}/reactivate`, {})).status, 200);
  await assertEnded(x, 'organization suspended and reactivated');
});

test('a revoked grant outside any organization ends the tokens exchanged from it', async (t) => {
  const { h, realm, user, signInTo, exchangeAll, exchange, introspect, assertLive, assertEnded } =
    await setup(t);
  const x = await exchangeAll(await signInTo(PLAIN, 'plain:read'));
  const nested = await exchange(x.jwt, INVENTORY);
  await assertLive(x);
  assert.equal(await introspect(nested), true);
  await h.ctx.db.query(
    `update oauth_grants set revoked_at = now(), revoked_reason = 'test'
      where realm_id = $1 and user_id = $2 and client_id = 'web-app' and org_id is null`,
    [realm.id, user.id],
  );
  await assertEnded(x, 'grant revoked');
  assert.equal(await introspect(nested), false, 'a nested exchange ends with the same grant');
});
