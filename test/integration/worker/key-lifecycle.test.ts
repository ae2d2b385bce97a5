// Worker task keys.lifecycle over a clock the test moves: planned rotation, activation after the
// prepublish period, retirement after publish_until. Default timings: prepublish 48 h, rotation
// 90 days, retirement 7 days, access tokens at most 60 minutes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JWK } from 'jose';
import { runKeyLifecycle } from '../../../src/keys/key-lifecycle.task.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import type { Queryable } from '../../../src/platform/db/db.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';
import { DAY, HOUR, keysIn, keysOf, MINUTE, ms, TestClock } from '../keys/key-helpers.ts';

const ROTATION = 90 * DAY;
const PREPUBLISH = 48 * HOUR;
const KEEP_PUBLISHED = 60 * MINUTE + 7 * DAY;

interface OutboxRow {
  id: string;
  event_type: string;
  event_version: number;
  org_id: string | null;
  occurred_at: Date;
  data: Record<string, unknown>;
}

const outboxOf = async (q: Queryable, realmId: string) =>
  (
    await q.query<OutboxRow>(
      'select id, event_type, event_version, org_id, occurred_at, data from outbox where realm_id = $1 order by id',
      [realmId],
    )
  ).rows;

const auditOf = async (q: Queryable, realmId: string, type: string) =>
  (
    await q.query<Record<string, unknown>>(
      'select * from audit_events where realm_id = $1 and type = $2 order by occurred_at, id',
      [realmId, type],
    )
  ).rows;

async function publishedKids(h: Harness, realm: string): Promise<string[]> {
  const res = await h.get(`/realms/${realm}/jwks`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { keys: JWK[] }).keys.map((k) => k.kid as string).sort();
}

// Each test starts at its own instant so realms of earlier tests in this file never line up.
const startAt = (n: number) => new TestClock(Date.UTC(2031, 0, 1 + n * 20));

describe('worker › keys.lifecycle', () => {
  test('case=an active key past the rotation interval starts exactly one planned rotation', async (t) => {
    const clock = startAt(1);
    const h = await startHarness(t, { clock });
    const deps = workerDeps(h.ctx);
    const realm = await h.createRealm();
    const [active] = await keysIn(h.ctx.db, realm.id, 'active');
    assert.ok(active);
    const t0 = clock.now().getTime();

    await runKeyLifecycle(deps, new Date(t0 + ROTATION - 1));
    assert.equal((await keysIn(h.ctx.db, realm.id, 'pending')).length, 0, 'not due a millisecond early');

    const rotationAt = clock.set(t0 + ROTATION);
    await runKeyLifecycle(deps, rotationAt);
    const pending = await keysIn(h.ctx.db, realm.id, 'pending');
    assert.equal(pending.length, 1);
    const [next] = pending;
    assert.ok(next);
    assert.equal(ms(next.created_at), rotationAt.getTime());
    assert.equal(next.algorithm, 'RS256');
    assert.deepEqual(
      (await keysIn(h.ctx.db, realm.id, 'active')).map((k) => k.kid),
      [active.kid],
      'the active key keeps signing until the new one is activated',
    );

    const [planned, ...morePlanned] = await auditOf(h.ctx.db, realm.id, 'signing_key.rotation.planned');
    assert.ok(planned);
    assert.equal(morePlanned.length, 0);
    assert.equal(planned.signal, 'signing_key_change');
    assert.equal(planned.actor_type, 'system');
    assert.equal(planned.target_id, next.kid);

    const events = await outboxOf(h.ctx.db, realm.id);
    const rotated = events.filter((e) => e.event_type === 'signing_key.rotated');
    assert.equal(rotated.length, 1);
    assert.deepEqual(rotated[0]?.data, {
      mode: 'planned',
      new_kid: next.kid,
      previous_kid: active.kid,
      previous_key_compromised: false,
    });
    assert.equal(rotated[0]?.org_id, null);
    assert.equal(rotated[0]?.event_version, 1);
    assert.match(rotated[0]?.id ?? '', /^obx_[0-9a-hjkmnp-tv-z]{26}$/);
    const alerts = events.filter((e) => e.event_type === 'security.alert');
    assert.equal(alerts.length, 1);
    assert.deepEqual(alerts[0]?.data, {
      signal: 'signing_key_change',
      audit_event_id: planned.id,
      event_type: 'signing_key.rotation.planned',
      actor_type: 'system',
      actor_id: null,
    });

    // The new key is published at once, next to the active one.
    assert.deepEqual(await publishedKids(h, realm.name), [active.kid, next.kid].sort());

    // Later runs while the key waits start nothing more.
    await runKeyLifecycle(deps, rotationAt);
    await runKeyLifecycle(deps, new Date(rotationAt.getTime() + HOUR));
    assert.equal((await keysIn(h.ctx.db, realm.id, 'pending')).length, 1);
    assert.equal((await outboxOf(h.ctx.db, realm.id)).length, events.length);
  });

  test('case=the pending key activates after the prepublish period and the old one retires after publish_until', async (t) => {
    const clock = startAt(2);
    const h = await startHarness(t, { clock });
    const deps = workerDeps(h.ctx);
    const realm = await h.createRealm();
    const [old] = await keysIn(h.ctx.db, realm.id, 'active');
    assert.ok(old);
    const t1 = clock.advance(ROTATION).getTime();
    await runKeyLifecycle(deps, new Date(t1));
    const [next] = await keysIn(h.ctx.db, realm.id, 'pending');
    assert.ok(next);
    const eventsBefore = (await outboxOf(h.ctx.db, realm.id)).length;

    await runKeyLifecycle(deps, new Date(t1 + PREPUBLISH - 1));
    assert.equal((await keysIn(h.ctx.db, realm.id, 'pending'))[0]?.kid, next.kid, 'still pending');

    const t2 = clock.set(t1 + PREPUBLISH).getTime();
    await runKeyLifecycle(deps, new Date(t2));
    const afterActivation = new Map((await keysOf(h.ctx.db, realm.id)).map((k) => [k.kid, k]));
    const activated = afterActivation.get(next.kid);
    const retiring = afterActivation.get(old.kid);
    assert.equal(activated?.state, 'active');
    assert.equal(ms(activated?.activated_at ?? null), t2);
    assert.equal(retiring?.state, 'retiring');
    assert.equal(ms(retiring?.retiring_at ?? null), t2);
    assert.equal(ms(retiring?.publish_until ?? null), t2 + KEEP_PUBLISHED);
    assert.equal((await h.ctx.keyStore.activeSigner(realm.id))?.kid, next.kid, 'the new key signs');

    const [activationAudit] = await auditOf(h.ctx.db, realm.id, 'signing_key.activated');
    assert.equal(activationAudit?.target_id, next.kid);
    assert.deepEqual(activationAudit?.data, { kid: next.kid, previous_kid: old.kid });
    assert.equal(
      (await outboxOf(h.ctx.db, realm.id)).length,
      eventsBefore,
      'activating a planned key emits no event',
    );
    assert.deepEqual(await publishedKids(h, realm.name), [old.kid, next.kid].sort(), 'both published');

    const publishUntil = t2 + KEEP_PUBLISHED;
    clock.set(publishUntil - 1);
    await runKeyLifecycle(deps, clock.now());
    assert.equal((await keysIn(h.ctx.db, realm.id, 'retiring'))[0]?.kid, old.kid, 'still retiring');

    clock.set(publishUntil);
    await runKeyLifecycle(deps, clock.now());
    const [retired] = await keysIn(h.ctx.db, realm.id, 'retired');
    assert.equal(retired?.kid, old.kid);
    assert.equal(ms(retired?.retired_at ?? null), publishUntil);
    assert.equal((await auditOf(h.ctx.db, realm.id, 'signing_key.retired'))[0]?.target_id, old.kid);
    clock.advance(5000); // past the key-set cache
    assert.deepEqual(await publishedKids(h, realm.name), [next.kid], 'the retired key left the key set');
  });

  test('case=concurrent runs never create two pending keys', { skip: RACE_NEEDS_POSTGRES }, async (t) => {
    const clock = startAt(3);
    const h = await startHarness(t, { clock });
    const deps = workerDeps(h.ctx);
    const realm = await h.createRealm();
    const at = clock.advance(ROTATION);

    await Promise.all([1, 2, 3].map(() => runKeyLifecycle(deps, at)));

    assert.equal((await keysIn(h.ctx.db, realm.id, 'pending')).length, 1);
    assert.equal((await keysOf(h.ctx.db, realm.id)).length, 2);
    const events = await outboxOf(h.ctx.db, realm.id);
    assert.equal(events.filter((e) => e.event_type === 'signing_key.rotated').length, 1);
    assert.equal((await auditOf(h.ctx.db, realm.id, 'signing_key.rotation.planned')).length, 1);
  });

  test('case=concurrent runs activate the pending key once', { skip: RACE_NEEDS_POSTGRES }, async (t) => {
    const clock = startAt(4);
    const h = await startHarness(t, { clock });
    const deps = workerDeps(h.ctx);
    const realm = await h.createRealm();
    await runKeyLifecycle(deps, clock.advance(ROTATION));
    const at = clock.advance(PREPUBLISH);

    await Promise.all([1, 2, 3].map(() => runKeyLifecycle(deps, at)));

    const keys = await keysOf(h.ctx.db, realm.id);
    assert.deepEqual(keys.map((k) => k.state).sort(), ['active', 'retiring']);
    assert.equal((await auditOf(h.ctx.db, realm.id, 'signing_key.activated')).length, 1);
  });
});
