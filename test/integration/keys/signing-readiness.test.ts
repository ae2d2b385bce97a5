// Readiness and the operator status object when a realm has no usable signing key. Readiness looks
// at every realm of the database, so each test removes the realm it broke before the next one runs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { OPERATOR_ACTOR } from '../../../src/audit/audit.types.ts';
import { RootKeyring } from '../../../src/platform/crypto/keyring.ts';
import { createRealm } from '../../../src/setup/realm.service.ts';
import { type Harness, startHarness, uniqueRealmName } from '../../harness/harness.ts';
import { keysIn, removeRealm } from './key-helpers.ts';

async function ready(h: Harness): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await h.get('/health/ready');
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function status(h: Harness): Promise<{ status: string; capabilities: Record<string, string> }> {
  const res = await h.internal('/status');
  assert.equal(res.status, 200);
  return (await res.json()) as { status: string; capabilities: Record<string, string> };
}

function removeAfter(t: TestContext, h: Harness, realmId: string): void {
  t.after(() => removeRealm(h.ctx.db, realmId));
}

describe('keys › readiness and status', () => {
  test('case=an active realm whose active key is gone makes readiness degraded', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    removeAfter(t, h, realm.id);
    assert.deepEqual(await ready(h), { status: 200, body: { status: 'ready' } });
    assert.equal((await status(h)).capabilities.signing, 'ok');

    await h.ctx.db.query(`delete from signing_keys where realm_id = $1 and state = 'active'`, [realm.id]);

    const r = await ready(h);
    assert.equal(r.status, 503);
    assert.equal(r.body.status, 'degraded');
    const s = await status(h);
    assert.equal(s.capabilities.signing, 'unavailable');
    assert.equal(s.status, 'degraded');
    assert.equal(await h.ctx.keyStore.activeSigner(realm.id), null);
  });

  test('case=a key sealed under a root key version this process lacks is not usable', async (t) => {
    const h = await startHarness(t);
    // Another host, already on root key version 2, created this realm.
    const newerHost = RootKeyring.fromKeys(new Map([[2, randomBytes(32)]]), 2);
    const realm = await createRealm(
      { db: h.ctx.db, keyring: newerHost, signingAlgorithm: 'RS256' },
      { name: uniqueRealmName() },
      OPERATOR_ACTOR,
      h.ctx.clock.now(),
    );
    removeAfter(t, h, realm.id);
    const [active] = await keysIn(h.ctx.db, realm.id, 'active');
    assert.equal(active?.root_key_version, 2);

    const r = await ready(h);
    assert.equal(r.status, 503);
    assert.equal(r.body.status, 'degraded');
    assert.equal((await status(h)).capabilities.signing, 'unavailable');
    assert.equal(await h.ctx.keyStore.activeSigner(realm.id), null);
    // Its public key is still served: verifiers are not affected by this host's missing version.
    const jwks = (await (await h.get(`/realms/${realm.name}/jwks`)).json()) as { keys: { kid: string }[] };
    assert.deepEqual(
      jwks.keys.map((k) => k.kid),
      [active?.kid],
    );
  });

  test('case=a suspended realm without a key keeps readiness but status reports signing unavailable', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    removeAfter(t, h, realm.id);
    await h.ctx.db.query(`delete from signing_keys where realm_id = $1`, [realm.id]);
    await h.ctx.db.query(`update realms set state = 'suspended' where id = $1`, [realm.id]);

    assert.deepEqual(await ready(h), { status: 200, body: { status: 'ready' } });
    const s = await status(h);
    assert.equal(s.capabilities.signing, 'unavailable');
    assert.equal(s.status, 'degraded');
  });

  test('case=once the broken realm is gone, readiness and signing recover', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    await h.ctx.db.query(`delete from signing_keys where realm_id = $1`, [realm.id]);
    assert.equal((await ready(h)).status, 503);
    await removeRealm(h.ctx.db, realm.id);
    assert.deepEqual(await ready(h), { status: 200, body: { status: 'ready' } });
    assert.equal((await status(h)).capabilities.signing, 'ok');
  });
});
