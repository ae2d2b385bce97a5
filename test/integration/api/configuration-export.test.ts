// The configuration export (spec doc 1, Configuration document; Import semantics 9): it writes
// exactly what the import reads, so export -> validate -> import into an empty realm -> export
// gives the same document (the `realm` metadata aside), and it leaves out what rule 9 leaves out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportConfiguration } from '../../../src/configuration/config-export.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { ORDERS, sampleDocument } from '../../harness/config-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';

type Json = Record<string, unknown>;

const exportOf = (h: Harness, realm: RealmRow) =>
  exportConfiguration(h.ctx.db, { realm, publicOrigin: h.ctx.config.server.publicOrigin });

test('case=round trip across two realms gives the same document', async (t) => {
  const h = await startHarness(t);
  const source = await h.createRealm();
  const target = await h.createRealm();
  const a = await apiCaller(h, source);
  const b = await apiCaller(h, target);
  const doc = sampleDocument({
    client_resource_grants: {
      ...(sampleDocument().client_resource_grants as Json),
      billing: {
        [ORDERS]: {
          scopes: ['orders:read'],
          subject_types: ['service_principal'],
          exchange_policy: { accept_from_audiences: [ORDERS], max_scopes: ['orders:read'] },
        },
      },
    },
  });
  const imported = await a.call('POST', '/configuration/imports', doc);
  assert.equal(imported.status, 200, JSON.stringify(await imported.clone().json()));
  // Left out: a disabled client, and what the service defines itself.
  assert.equal(
    (await a.call('POST', '/clients', { client_id: 'old', name: 'Old', type: 'service' })).status,
    201,
  );
  assert.equal((await a.call('POST', '/clients/old/disable')).status, 200);

  const first = await exportOf(h, source);
  assert.equal(first.format, 'service.realm-config.v1');
  assert.deepEqual(first.realm, { name: source.name, display_name: source.display_name, policy_revision: 2 });
  assert.equal('expected_policy_revision' in first, false);
  assert.ok(first.excluded.includes('client_secrets'));
  assert.deepEqual(
    first.clients.map((c) => c.client_id),
    ['billing', 'shop-web'],
  );
  assert.deepEqual(
    first.resources.map((r) => r.audience),
    [ORDERS],
  );
  assert.deepEqual(
    first.roles.map((r) => r.name),
    ['refunder'],
  );
  assert.deepEqual(
    first.permissions.map((p) => p.name),
    ['orders.refund'],
  );
  assert.deepEqual(Object.keys(first.client_resource_grants), ['billing', 'shop-web']);
  assert.deepEqual(Object.keys(first.client_resource_grants['shop-web'] ?? {}), ['builtin:userinfo', ORDERS]);
  assert.equal(JSON.stringify(first).includes('secret"'), false);

  // The export is valid as it stands for its own realm: every object unchanged.
  // biome-ignore lint/suspicious/noExplicitAny: a plan body read in assertions only
  const same = (await (await a.call('POST', '/configuration/validate', first)).json()) as any;
  assert.deepEqual(same.errors, []);
  assert.equal(same.policy.action, 'unchanged');
  assert.deepEqual(same.clients.create, []);

  // Into the empty realm: the policy changes, so the document says which revision it expects.
  const forTarget = { ...first, expected_policy_revision: 0 };
  // biome-ignore lint/suspicious/noExplicitAny: a plan body read in assertions only
  const plan = (await (await b.call('POST', '/configuration/validate', forTarget)).json()) as any;
  assert.deepEqual(plan.errors, []);
  assert.deepEqual(plan.clients.create, ['billing', 'shop-web']);
  const res = await b.call('POST', '/configuration/imports', forTarget);
  assert.equal(res.status, 200, JSON.stringify(await res.clone().json()));

  const second = await exportOf(h, target);
  const { realm: _a, ...restFirst } = first;
  const { realm: _b, ...restSecond } = second;
  assert.equal(JSON.stringify(restSecond), JSON.stringify(restFirst));
});
