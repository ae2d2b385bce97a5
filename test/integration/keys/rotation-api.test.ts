// Signing-key rotation through the administration API (spec doc 2, "Signing key" states, "Keys and
// emergency controls"): a planned rotation driven through every transition on the harness clock,
// with tokens of the retiring key still verifying; an emergency rotation taking the active key out
// of service at once; who may rotate.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { decodeProtectedHeader, type JWK } from 'jose';
import { runKeyLifecycle } from '../../../src/keys/key-lifecycle.task.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { audits, events, rows } from '../../harness/signin-kit.ts';
import { serviceTokenSeed } from '../../harness/token-kit.ts';
import { DAY, HOUR, keysIn, MINUTE, ms } from './key-helpers.ts';

const ORDERS = 'https://orders.example.com';
const KEEP_PUBLISHED = 60 * MINUTE + 7 * DAY; // max access-token TTL + keys.retirement_period

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  const seed = await serviceTokenSeed(h, realm, ORDERS);
  const token = async () => {
    const r = await seed.token();
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.access_token as string;
  };
  const { active, svc } = seed;
  const rotate = (body: unknown, caller: ApiCallerKit = admin) =>
    caller.call('POST', '/signing-key-rotations', body);
  const published = async () => {
    const r = await h.get(`/realms/${realm.name}/jwks`);
    return ((await r.json()) as { keys: JWK[] }).keys.map((k) => k.kid as string).sort();
  };
  /** One keys.lifecycle run at the harness clock's reading, which it returns. */
  const lifecycle = async () => {
    const at = h.clock.now();
    await runKeyLifecycle(workerDeps(h.ctx), at);
    return at.getTime();
  };
  return { h, realm, admin, svc, token, active, rotate, published, lifecycle };
}

const kidOf = (jwt: string) => decodeProtectedHeader(jwt).kid as string;

async function listKeys(admin: ApiCallerKit) {
  const r = await admin.call('GET', '/signing-keys');
  assert.equal(r.status, 200);
  return ((await r.json()) as { items: Record<string, unknown>[] }).items;
}

async function activeKid(h: Harness, realmId: string): Promise<string> {
  const [k] = await keysIn(h.ctx.db, realmId, 'active');
  assert.ok(k);
  return k.kid;
}

describe('keys › rotation API', () => {
  test('case=a planned rotation goes pending, active, retiring, retired; a retiring key still verifies', async (t) => {
    const { h, realm, admin, token, active, rotate, published, lifecycle } = await setup(t);
    const k1 = await activeKid(h, realm.id);
    const t0 = h.clock.now().getTime();

    const res = await rotate({ mode: 'planned', reason: 'quarterly rotation', algorithm: 'ES256' });
    assert.equal(res.status, 201);
    const body = (await res.json()) as Record<string, unknown> & { key: Record<string, unknown> };
    const k2 = body.new_kid as string;
    assert.deepEqual(
      { ...body, key: undefined },
      { mode: 'planned', new_kid: k2, previous_kid: k1, previous_key_compromised: false, key: undefined },
    );
    assert.equal(body.key.state, 'pending');
    assert.equal(body.key.algorithm, 'ES256');
    assert.deepEqual(await published(), [k1, k2].sort(), 'published at once');

    // One planned rotation waits at a time.
    const again = await rotate({ mode: 'planned', reason: 'twice' });
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { code: string }).code, 'conflict');
    assert.equal((await keysIn(h.ctx.db, realm.id, 'pending')).length, 1);

    const [planned] = await audits(h, realm, 'signing_key.rotation.planned');
    assert.equal(planned?.actor_type, 'user');
    assert.equal(planned?.actor_id, admin.userId);
    assert.equal(planned?.reason, 'quarterly rotation');
    assert.equal(planned?.signal, 'signing_key_change');
    const [rotated] = await events(h, realm, 'signing_key.rotated');
    assert.deepEqual(rotated?.data, {
      mode: 'planned',
      new_kid: k2,
      previous_kid: k1,
      previous_key_compromised: false,
    });

    // Just before the prepublish period ends the old key still signs.
    h.clock.advance(48 * HOUR - MINUTE);
    await lifecycle();
    const signedByOld = await token();
    assert.equal(kidOf(signedByOld), k1);
    h.clock.advance(MINUTE);
    const activatedAt = await lifecycle();
    assert.equal(await activeKid(h, realm.id), k2);
    const [retiring] = await keysIn(h.ctx.db, realm.id, 'retiring');
    assert.equal(retiring?.kid, k1);
    assert.equal(ms(retiring?.publish_until ?? null), activatedAt + KEEP_PUBLISHED);
    assert.ok(activatedAt - t0 >= 48 * HOUR);

    // New tokens carry the new key; the retiring key's token still verifies.
    assert.equal(kidOf(await token()), k2);
    assert.equal(await active(signedByOld), true, 'a retiring key still verifies');
    // Two days on, the administrator signs in again to look.
    const listed = await listKeys(await apiCaller(h, realm, { userId: admin.userId, roles: [] }));
    assert.deepEqual(
      listed.map((k) => [k.kid, k.state]),
      [
        [k2, 'active'],
        [k1, 'retiring'],
      ],
    );
    assert.equal(listed[1]?.publish_until, new Date(activatedAt + KEEP_PUBLISHED).toISOString());
    for (const k of listed) {
      assert.deepEqual(Object.keys(k).sort(), [
        'activated_at',
        'algorithm',
        'compromised_at',
        'created_at',
        'kid',
        'publish_until',
        'retired_at',
        'retiring_at',
        'state',
      ]);
    }

    h.clock.advance(KEEP_PUBLISHED);
    await lifecycle();
    assert.equal((await keysIn(h.ctx.db, realm.id, 'retired'))[0]?.kid, k1);
    assert.deepEqual(await published(), [k2], 'the retired key left the key set');
  });

  test('case=an emergency rotation compromises the active key, retires the pending one and signs with a new key at once', async (t) => {
    const { h, realm, admin, token, active, rotate, published } = await setup(t);
    const k1 = await activeKid(h, realm.id);
    const before = await token();
    assert.equal(await active(before), true);
    const planned = await rotate({ mode: 'planned', reason: 'scheduled' });
    const pendingKid = ((await planned.json()) as { new_kid: string }).new_kid;

    const res = await rotate({ mode: 'emergency', reason: 'private key leaked in a log' });
    assert.equal(res.status, 201);
    const body = (await res.json()) as { new_kid: string; previous_kid: string; key: { state: string } };
    const k3 = body.new_kid;
    assert.equal(body.previous_kid, k1);
    assert.equal(body.key.state, 'active');

    // The administrator's own token was signed by the compromised key too: a new sign-in.
    assert.equal((await admin.call('GET', '/signing-keys')).status, 401);
    const again = await apiCaller(h, realm, { userId: admin.userId, roles: [] });
    const states = Object.fromEntries((await listKeys(again)).map((k) => [k.kid, k.state]));
    assert.deepEqual(states, { [k1]: 'compromised', [pendingKid]: 'retired', [k3]: 'active' });
    assert.deepEqual(await published(), [k3], 'only the new key is published');
    assert.equal(await active(before), false, 'a token of the compromised key fails introspection');
    const after = await token();
    assert.equal(kidOf(after), k3);
    assert.equal(await active(after), true);

    const revocations = await rows(h, 'select jti, kind, reason from token_revocations where realm_id = $1', [
      realm.id,
    ]);
    assert.deepEqual(revocations, [{ jti: k1, kind: 'key', reason: 'key_compromised' }]);
    const rotated = await events(h, realm, 'signing_key.rotated');
    assert.deepEqual(rotated.at(-1)?.data, {
      mode: 'emergency',
      new_kid: k3,
      previous_kid: k1,
      previous_key_compromised: true,
    });
    const [emergency] = await audits(h, realm, 'signing_key.rotation.emergency');
    assert.equal(emergency?.category, 'emergency');
    assert.equal(emergency?.signal, 'signing_key_change');
    assert.equal(emergency?.reason, 'private key leaked in a log');
    const [compromised] = await audits(h, realm, 'signing_key.compromised');
    assert.equal(compromised?.target_id, k1);
    // The lifecycle task leaves the new key alone.
    await runKeyLifecycle(workerDeps(h.ctx), h.clock.now());
    assert.equal(await activeKid(h, realm.id), k3);
  });

  test('case=rotation needs realm.keys.rotate and authentication within 5 minutes; bad bodies change nothing', async (t) => {
    const { h, realm, rotate } = await setup(t);
    const reader = await apiCaller(h, realm, { roles: ['resource-server'] });
    const denied = await rotate({ mode: 'planned', reason: 'x' }, reader);
    assert.equal(denied.status, 403);
    assert.equal(((await denied.json()) as { code: string }).code, 'forbidden');

    for (const [body, status] of [
      [{ mode: 'planned' }, 422],
      [{ mode: 'sometimes', reason: 'x' }, 422],
      [{ mode: 'planned', reason: 'x', algorithm: 'HS256' }, 422],
      [{ mode: 'planned', reason: 'x', extra: true }, 400],
    ] as const) {
      const r = await rotate(body);
      assert.equal(r.status, status, JSON.stringify(body));
    }

    h.clock.advance(5 * MINUTE + 1000);
    const stale = await rotate({ mode: 'emergency', reason: 'too late' });
    assert.equal(stale.status, 403);
    const problemBody = (await stale.json()) as { code: string; obligation: { max_age_seconds: number } };
    assert.equal(problemBody.code, 'step_up_required');
    assert.equal(problemBody.obligation.max_age_seconds, 300);
    assert.equal((await keysIn(h.ctx.db, realm.id, 'pending')).length, 0);
    assert.equal((await keysIn(h.ctx.db, realm.id, 'compromised')).length, 0);
  });
});
