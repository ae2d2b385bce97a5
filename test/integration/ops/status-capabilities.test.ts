// The operator status object and readiness beyond the happy path (spec doc 2, Operator status
// object; Health, status and metrics; Restore marker): backlogs past 300 seconds, a realm without a
// usable key (suspended ones included), and the restore marker.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startHarness } from '../../harness/harness.ts';
import { assertJson, send } from '../edge/http-client.ts';

type Status = {
  status: string;
  capabilities: Record<string, string>;
  backlog_oldest_seconds: Record<string, number>;
};

const BACKLOGS = ['audit_sealing', 'email_delivery', 'jobs', 'outbox', 'webhooks'];

describe('ops › status › capabilities', () => {
  test('case=a backlog older than 300 seconds degrades its capability; empty queues report 0', async (t) => {
    let offset = 0;
    const h = await startHarness(t, { clock: { now: () => new Date(Date.now() + offset) } });
    t.after(() => h.ctx.db.query('update outbox set dispatched_at = now() where dispatched_at is null'));
    const realm = await h.createRealm();
    // An event committed now and not dispatched (no worker runs here).
    await h.ctx.db.query(
      `insert into outbox (realm_id, id, event_type, occurred_at, data) values ($1, $2, 'user.created', $3, '{}')`,
      [realm.id, 'obx_01jstatusbacklog0000000000', h.clock.now()],
    );
    const fresh = assertJson(await send(h.internalUrl, '/status'), 200) as Status;
    assert.deepEqual(Object.keys(fresh.backlog_oldest_seconds).sort(), BACKLOGS);
    assert.equal(fresh.backlog_oldest_seconds.jobs, 0, 'no job queued: 0');
    assert.equal(fresh.capabilities.outbox, 'ok');

    // The event and the realm's audit records still wait; 400 s later they are late.
    offset = 400_000;
    const late = assertJson(await send(h.internalUrl, '/status'), 200) as Status;
    assert.equal(late.status, 'degraded');
    assert.equal(late.capabilities.outbox, 'degraded');
    assert.equal(late.capabilities.audit_sealing, 'degraded');
    assert.ok(late.backlog_oldest_seconds.outbox! > 300, `outbox ${late.backlog_oldest_seconds.outbox}`);
    assert.ok(late.backlog_oldest_seconds.audit_sealing! > 300);
    assert.equal(late.capabilities.jobs, 'ok', 'an empty queue is never late');
    assert.equal(late.backlog_oldest_seconds.jobs, 0);
  });

  test('case=signing is unavailable when a suspended realm lacks an active key; readiness counts active realms', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    await h.ctx.db.query(`update signing_keys set state = 'retired' where realm_id = $1`, [realm.id]);
    await h.ctx.db.query(`update realms set state = 'suspended' where id = $1`, [realm.id]);

    const body = assertJson(await send(h.internalUrl, '/status'), 200) as Status;
    assert.equal(body.capabilities.signing, 'unavailable');
    assert.equal(body.status, 'degraded');
    assert.deepEqual(assertJson(await send(h.publicUrl, '/health/ready'), 200), { status: 'ready' });

    // The same realm active: readiness is degraded too.
    await h.ctx.db.query(`update realms set state = 'active' where id = $1`, [realm.id]);
    const ready = await send(h.publicUrl, '/health/ready');
    assert.equal(ready.status, 503);
    assert.equal((assertJson(ready, 503) as { status: string }).status, 'degraded');
    await h.ctx.db.query(`update signing_keys set state = 'active' where realm_id = $1`, [realm.id]);
  });

  test('case=while the restore marker is set, readiness answers 503 unavailable restore_pending', async (t) => {
    const h = await startHarness(t);
    await h.createRealm();
    await h.ctx.db.query('insert into restore_marker (marked_at, marked_by) values (now(), $1)', ['test']);
    const res = await send(h.publicUrl, '/health/ready');
    assert.deepEqual(assertJson(res, 503), { status: 'unavailable', reason: 'restore_pending' });
    await h.ctx.db.query('delete from restore_marker');
    assert.deepEqual(assertJson(await send(h.publicUrl, '/health/ready'), 200), { status: 'ready' });
  });
});
