// Introspection keeps what its live checks read of clients, resources and introspector
// registrations per process (src/access/lean-liveness.ts), proved current by
// realms.clients_revision. Every change here is made with plain SQL, past the application's own
// write paths, as another server or an operator's statement would: each counts at the next call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
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

const ORDERS = 'https://orders.example.com';

test('introspection: a kept copy never outlives a change made in SQL', async (t) => {
  const { h, realm, client } = await signinSetup(t);
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const orders = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(h, realm, client, orders, { scopes: ['orders:read'] });
  const api = await seedServiceClient(h, realm, 'orders-api');
  await registerIntrospector(h, realm, orders, api.client);
  const tokens = await codeFlow(h, realm, creds, {
    start: { scope: 'openid orders:read', resource: [ORDERS] },
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const token = tokens.body.access_token as string;
  const introspect = () => oauthPost(h, realm, 'introspect', { token }, api.creds);
  const sql = (text: string, params: unknown[]) => h.ctx.db.query(text, params);

  for (let i = 0; i < 2; i++) {
    const r = await introspect();
    assert.equal(r.status, 200);
    assert.equal(r.body.active, true, `call ${i + 1}`);
  }

  const inactive: { change: string; undo: string; params: unknown[] }[] = [
    {
      change: `update clients set state = 'disabled' where realm_id = $1 and id = $2`,
      undo: `update clients set state = 'active' where realm_id = $1 and id = $2`,
      params: [realm.id, client.id],
    },
    {
      change: `update resources set state = 'disabled' where realm_id = $1 and id = $2`,
      undo: `update resources set state = 'active' where realm_id = $1 and id = $2`,
      params: [realm.id, orders],
    },
    {
      change:
        'delete from resource_introspectors where realm_id = $1 and resource_id = $2 and client_row_id = $3',
      undo: `insert into resource_introspectors (realm_id, resource_id, client_row_id, created_at)
             values ($1, $2, $3, now())`,
      params: [realm.id, orders, api.client.id],
    },
  ];
  for (const step of inactive) {
    await sql(step.change, step.params);
    const r = await introspect();
    assert.deepEqual(r.body, { active: false }, step.change);
    await sql(step.undo, step.params);
    assert.equal((await introspect()).body.active, true, step.undo);
  }

  // The caller's own client and secrets are part of the copy too.
  await sql(`update clients set state = 'disabled' where realm_id = $1 and id = $2`, [
    realm.id,
    api.client.id,
  ]);
  assert.equal((await introspect()).status, 401, 'a disabled caller');
  await sql(`update clients set state = 'active' where realm_id = $1 and id = $2`, [realm.id, api.client.id]);
  assert.equal((await introspect()).body.active, true);
  await sql(`update client_secrets set expires_at = $3 where realm_id = $1 and client_row_id = $2`, [
    realm.id,
    api.client.id,
    new Date(h.clock.now().getTime() + 60_000),
  ]);
  assert.equal((await introspect()).body.active, true, 'the secret is still valid');
  h.clock.advance(120_000);
  assert.equal((await introspect()).status, 401, 'the secret expired, with no write');
  await sql(`update client_secrets set expires_at = null where realm_id = $1 and client_row_id = $2`, [
    realm.id,
    api.client.id,
  ]);
  assert.equal((await introspect()).status, 200);
  await sql('update client_secrets set revoked_at = now() where realm_id = $1 and client_row_id = $2', [
    realm.id,
    api.client.id,
  ]);
  assert.equal((await introspect()).status, 401, 'a revoked secret');
});
