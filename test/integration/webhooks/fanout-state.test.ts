// Fan-out goes by each subscription's state when the event committed, not when the worker
// dispatches (document 2, Webhook subscription and delivery: events published while paused or
// disabled are not queued). The dispatcher runs late on purpose in every case here.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { addEvent } from '../../../src/events/outbox.repo.ts';
import { cleanupDeliveries } from '../../../src/webhooks/index.ts';
import { holdOpen } from '../../harness/held-transaction.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';
import { deliver, deliveriesOf, dispatch, emit, setup, subscribe, type WebhookSetup } from './webhook-kit.ts';

const created = (n: number) => ({ user_id: `usr_${n}`, created_via: 'admin' });

async function setState(s: WebhookSetup, id: unknown, state: 'active' | 'paused' | 'disabled') {
  const res = await s.admin.call('PATCH', `/webhooks/${id}`, { state });
  assert.equal(res.status, 200);
}

async function subscribed(t: TestContext) {
  const s = await setup(t);
  return { s, sub: await subscribe(s) };
}

describe('webhooks › fan-out by the state at commit', () => {
  test('case=an event committed while paused is not queued, though the subscription is active again at dispatch', async (t) => {
    const { s, sub } = await subscribed(t);
    await setState(s, sub.id, 'paused');
    await emit(s, 'user.created', created(1));
    await setState(s, sub.id, 'active');
    await dispatch(s);
    assert.deepEqual(await deliveriesOf(s, String(sub.id)), []);

    const later = await emit(s, 'user.created', created(2));
    await dispatch(s);
    assert.deepEqual(
      (await deliveriesOf(s, String(sub.id))).map((d) => d.event_id),
      [later],
      'events after the reactivation go out',
    );
  });

  test('case=an event committed while active is queued, though the subscription is paused at dispatch; it waits', async (t) => {
    const { s, sub } = await subscribed(t);
    const before = await emit(s, 'user.created', created(3));
    await setState(s, sub.id, 'disabled');
    await dispatch(s);
    const [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.event_id, before);
    await deliver(s);
    assert.equal(s.receiver.received.length, 0, 'no attempt while disabled');
    await setState(s, sub.id, 'active');
    s.h.clock.advance(61_000);
    await deliver(s);
    assert.equal(s.receiver.received.length, 1);
  });

  test('case=a subscription created after an event committed does not receive it', async (t) => {
    const s = await setup(t);
    await emit(s, 'user.created', created(4));
    const sub = await subscribe(s);
    await dispatch(s);
    assert.deepEqual(await deliveriesOf(s, String(sub.id)), []);
  });

  test('case=an event whose transaction commits after a pause is not queued, though it was written before', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const { s, sub } = await subscribed(t);
    const event = await holdOpen(s.h.ctx.db, (tx) =>
      addEvent(tx, {
        realmId: s.realm.id,
        type: 'user.created',
        data: created(5),
        occurredAt: s.h.clock.now(),
      }),
    );
    await setState(s, sub.id, 'paused');
    await event.commit();
    await setState(s, sub.id, 'active');
    await dispatch(s);
    assert.deepEqual(await deliveriesOf(s, String(sub.id)), []);
  });

  test('case=an event that commits before a pause commits is queued, though the pause was written first', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const { s, sub } = await subscribed(t);
    const pause = await holdOpen(s.h.ctx.db, (tx) =>
      tx.query(`update webhook_subscriptions set state = 'paused' where realm_id = $1 and id = $2`, [
        s.realm.id,
        sub.id,
      ]),
    );
    const id = await emit(s, 'user.created', created(6));
    await pause.commit();
    await dispatch(s);
    assert.deepEqual(
      (await deliveriesOf(s, String(sub.id))).map((d) => d.event_id),
      [id],
    );
  });

  test('case=webhooks.cleanup drops logged states that no waiting event needs', async (t) => {
    const { s, sub } = await subscribed(t);
    const states = async () =>
      (
        await s.h.ctx.db.query<{ state: string }>(
          'select state from webhook_subscription_states where realm_id = $1 and subscription_id = $2 order by seq',
          [s.realm.id, sub.id],
        )
      ).rows.map((r) => r.state);
    await setState(s, sub.id, 'paused');
    const waiting = await emit(s, 'user.created', created(7));
    await setState(s, sub.id, 'active');
    await cleanupDeliveries(s.deps, s.h.clock.now());
    assert.deepEqual(
      await states(),
      ['paused', 'active'],
      'the first state goes; the waiting event still needs the pause',
    );
    await dispatch(s);
    assert.deepEqual(await deliveriesOf(s, String(sub.id)), [], `${waiting} went by the pause`);
    await cleanupDeliveries(s.deps, s.h.clock.now());
    assert.deepEqual(await states(), ['active']);
  });
});
