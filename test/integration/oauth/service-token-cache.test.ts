// client_credentials keeps what it read per process (src/oauth/grants/service-token-cache.ts),
// proved current by realms.clients_revision. Every change here is made with plain SQL, past the
// application's own write paths, as another server or an operator's statement would: each counts
// at the next request. A secret's use, recorded once a minute, does not move the revision.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from 'jose';
import type { Harness } from '../../harness/harness.ts';
import { signinSetup } from '../../harness/signin-kit.ts';
import { oauthPost, seedGrant, seedResource, seedServiceClient } from '../../harness/token-kit.ts';

const ORDERS = 'https://orders.example.com';

async function revision(h: Harness, realmId: string): Promise<string> {
  const r = await h.ctx.db.query<{ v: string }>(
    'select clients_revision::text as v from realms where id = $1',
    [realmId],
  );
  return r.rows[0]?.v ?? '';
}

test('client_credentials: a kept copy never outlives a change made in SQL', async (t) => {
  const { h, realm } = await signinSetup(t);
  const svc = await seedServiceClient(h, realm, 'billing');
  const res = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(h, realm, svc.client, res, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const token = () =>
    oauthPost(h, realm, 'token', { grant_type: 'client_credentials', resource: ORDERS }, svc.creds);
  const sql = (text: string, params: unknown[] = []) => h.ctx.db.query(text, params);

  const first = await token();
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(decodeJwt(first.body.access_token).sub, svc.principalId);
  const afterFirst = await revision(h, realm.id);
  const used = await sql(
    'select last_used_at from client_secrets where realm_id = $1 and client_row_id = $2',
    [realm.id, svc.client.id],
  );
  assert.notEqual(used.rows[0]?.last_used_at, null, 'the secret use is recorded');
  assert.equal((await token()).status, 200);
  assert.equal(await revision(h, realm.id), afterFirst, 'recording a use leaves the revision alone');

  const steps: { change: string; undo: string; expect: string }[] = [
    {
      change: `update clients set state = 'disabled' where realm_id = $1 and id = $2`,
      undo: `update clients set state = 'active' where realm_id = $1 and id = $2`,
      expect: 'invalid_client',
    },
    {
      change: `update service_principals set state = 'disabled' where realm_id = $1 and client_row_id = $2`,
      undo: `update service_principals set state = 'active' where realm_id = $1 and client_row_id = $2`,
      expect: 'unauthorized_client',
    },
    {
      change: `update client_resource_grants set subject_types = '{user}' where realm_id = $1 and client_row_id = $2`,
      undo: `update client_resource_grants set subject_types = '{service_principal}' where realm_id = $1 and client_row_id = $2`,
      expect: 'invalid_target',
    },
    {
      change: `update resources set state = 'disabled' where realm_id = $1 and $2::text is not null`,
      undo: `update resources set state = 'active' where realm_id = $1 and $2::text is not null`,
      expect: 'invalid_target',
    },
  ];
  for (const step of steps) {
    const before = await revision(h, realm.id);
    await sql(step.change, [realm.id, svc.client.id]);
    assert.notEqual(await revision(h, realm.id), before, step.change);
    const refused = await token();
    assert.equal(refused.body.error, step.expect, `${step.change}: ${JSON.stringify(refused.body)}`);
    await sql(step.undo, [realm.id, svc.client.id]);
    const again = await token();
    assert.equal(again.status, 200, `${step.undo}: ${JSON.stringify(again.body)}`);
  }

  // A key's state is part of the copy too.
  const beforeKey = await revision(h, realm.id);
  await sql(`update signing_keys set state = state where realm_id = $1 and state = 'active'`, [realm.id]);
  assert.notEqual(await revision(h, realm.id), beforeKey, 'a write to signing_keys moves the revision');

  // A secret that expires later is dropped from the copy when its time comes, with no write.
  await sql(`update client_secrets set expires_at = $3 where realm_id = $1 and client_row_id = $2`, [
    realm.id,
    svc.client.id,
    new Date(h.clock.now().getTime() + 60_000),
  ]);
  assert.equal((await token()).status, 200, 'still valid');
  const kept = await revision(h, realm.id);
  h.clock.advance(120_000);
  const expired = await token();
  assert.equal(expired.body.error, 'invalid_client', JSON.stringify(expired.body));
  assert.equal(await revision(h, realm.id), kept, 'the expiry needed no write');

  // A revoked secret is refused at once.
  await sql(`update client_secrets set expires_at = null where realm_id = $1 and client_row_id = $2`, [
    realm.id,
    svc.client.id,
  ]);
  assert.equal((await token()).status, 200);
  await sql(`update client_secrets set revoked_at = now() where realm_id = $1 and client_row_id = $2`, [
    realm.id,
    svc.client.id,
  ]);
  assert.equal((await token()).body.error, 'invalid_client');
});
